"""Certificates made at test time with the openssl command: CAs, server certificates for
127.0.0.1 and localhost, and client certificates. Keys are EC P-256 (fast to make)."""
import os
import subprocess


def _openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class Certificate:
    """A certificate and its key, as PEM files: .cert and .key are their paths."""

    def __init__(self, directory, name):
        self.cert = os.path.join(directory, f"{name}.crt")
        self.key = os.path.join(directory, f"{name}.key")

    def read(self):
        """(certificate PEM bytes, key PEM bytes)."""
        with open(self.cert, "rb") as c, open(self.key, "rb") as k:
            return c.read(), k.read()


def make_ca(directory, name):
    """A self-signed CA named `name`."""
    ca = Certificate(directory, name)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", ca.key, "-out", ca.cert, "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return ca


def make_certificate(directory, name, ca, server=True):
    """A certificate signed by `ca`: for a server at 127.0.0.1 / localhost, or for a client."""
    certificate = Certificate(directory, name)
    request = os.path.join(directory, f"{name}.csr")
    extensions = os.path.join(directory, f"{name}.ext")
    with open(extensions, "w") as f:
        if server:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        else:
            f.write("extendedKeyUsage=clientAuth\n")
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", certificate.key, "-out", request, "-subj", f"/CN={name}")
    _openssl("x509", "-req", "-in", request, "-CA", ca.cert, "-CAkey", ca.key,
             "-CAcreateserial", "-out", certificate.cert, "-days", "2", "-extfile", extensions)
    return certificate


def install(certificate, cert_path, key_path):
    """Puts `certificate` at cert_path and key_path, each replaced at once (a rename), as
    Kubernetes and cert-manager replace mounted secrets."""
    cert, key = certificate.read()
    for path, data in ((key_path, key), (cert_path, cert)):
        with open(path + ".new", "wb") as f:
            f.write(data)
        os.replace(path + ".new", path)
