"""``headway extract``: the text output (and the Parquet index) from existing WARC files,
headway's or any other tool's (see ``files.py``)."""
