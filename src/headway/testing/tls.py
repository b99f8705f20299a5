"""Certificates for the simulated web over HTTPS, made on the spot (never committed).

``make_test_pki(directory, suffix)`` writes a fresh self-signed certificate authority and
a server certificate for ``*.{suffix}`` (and ``localhost``/``127.0.0.1``) signed by it
(``suffix`` needs two labels or more, e.g. ``sim.test``: TLS clients refuse a wildcard
right under a top-level name such as ``*.sim``):
``ca.pem`` (what a crawler is told to trust with ``--ca-file``), ``server.pem`` and
``server.key`` (what the server presents). Keys are ECDSA P-256, valid for one day; the
directory should be a temporary one.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SimPki", "make_test_pki", "server_context"]


@dataclass(frozen=True, slots=True)
class SimPki:
    ca_file: Path
    cert_file: Path
    key_file: Path


def make_test_pki(directory: Path, suffix: str = "sim.test") -> SimPki:
    """Write a CA and a ``*.{suffix}`` server certificate into ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if "." not in suffix.strip("."):
        raise ValueError(f"suffix {suffix!r}: a wildcard needs two labels or more")
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "headway test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [
        x509.DNSName(f"*.{suffix}"),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"*.{suffix}")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pki = SimPki(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    pki.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    pki.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pki.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    pki.key_file.chmod(0o600)
    return pki


def server_context(cert_file: Path, key_file: Path, *, resumption: bool = True) -> ssl.SSLContext:
    """A server-side TLS context presenting ``cert_file``.

    With ``resumption`` off it refuses every session resumption: it issues no TLS 1.3
    session tickets (``num_tickets = 0``; ``OP_NO_TICKET`` as well), so a client has
    nothing to offer, and it speaks TLS 1.3 only, because Python's ``ssl`` cannot turn
    off OpenSSL's server-side session cache, through which TLS 1.2 would still resume
    by session id. Every handshake is then a full one."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert_file, key_file)
    if not resumption:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.options |= ssl.OP_NO_TICKET
        ctx.num_tickets = 0
    return ctx
