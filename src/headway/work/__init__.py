"""Work items and the pipeline's pure decisions about them (pure): what a fetch slot
hands on (``items``), what admission lets into the frontier (``admission``) and how a
finished item is settled (``settle``). Nothing here does IO, sleeps or reads a clock."""
