#!/usr/bin/env python3
"""TLS and mutual TLS of a real mtserve, with certificates made at test time (openssl).

mtserve serves gRPC and HTTP with a server certificate signed by CA "one" and requires client
certificates signed by a client CA. Then:
- gRPC (Python grpcio, mtclient, client/python/translate.py) and HTTPS (Python's ssl) translate
  with the right CA and a client certificate;
- plaintext to either TLS port fails, a client trusting another CA fails, and a client without a
  client certificate fails;
- start-up refuses what cannot work, naming the flag: a certificate without a key, a missing
  file, an encrypted key, a key of another certificate;
- rotation: the files replaced by a certificate of CA "two" (then SIGHUP) are what new handshakes
  get, while a connection opened before goes on answering; a broken certificate file and a key
  that does not match leave the last good files in use, and the log says why; files replaced
  again are picked up without a signal, by polling.

Usage: tls_test.py BIN_DIR STUBS_DIR
"""
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time

# The shared helpers (without writing bytecode into the source tree).
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks  # noqa: E402
from mtserve_process import MtserveProcess, wait_until  # noqa: E402
from test_certificates import install, make_ca, make_certificate  # noqa: E402

TEXT = "A man is riding a bike."




def grpc_translate(grpc, pb, pb_grpc, port, ca=None, client=None, plaintext=False):
    """The translation of TEXT over gRPC, or the grpc.StatusCode of the failure."""
    if plaintext:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    else:
        cert, key = client.read() if client else (None, None)
        with open(ca.cert, "rb") as f:
            roots = f.read()
        credentials = grpc.ssl_channel_credentials(root_certificates=roots, private_key=key,
                                                   certificate_chain=cert)
        channel = grpc.secure_channel(f"127.0.0.1:{port}", credentials)
    with channel:
        try:
            response = pb_grpc.TranslatorStub(channel).Translate(
                pb.TranslateRequest(texts=[TEXT.encode()]), timeout=30)
            return response.translations[0].hypotheses[0].text
        except grpc.RpcError as e:
            return e.code()


def https_context(ca, client=None):
    context = ssl.create_default_context(cafile=ca.cert)
    if client:
        context.load_cert_chain(client.cert, client.key)
    return context


def https_translate(connection):
    """The translation of TEXT over an HTTPS connection (kept open)."""
    connection.request("POST", "/v1/translate", body=json.dumps({"texts": [TEXT]}),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        return f"HTTP {response.status}: {body!r}"
    return json.loads(body)["translations"][0]["hypotheses"][0]["text"]


def https_result(port, ca, client=None):
    """The translation over a new HTTPS connection, or the name of the exception it failed with."""
    connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=30,
                                             context=https_context(ca, client))
    try:
        return https_translate(connection)
    except (ssl.SSLError, OSError, http.client.HTTPException) as e:
        return type(e).__name__
    finally:
        connection.close()


def plaintext_http_fails(port):
    """True if a plaintext HTTP request to the TLS port gets no HTTP answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status != 200
    except (OSError, http.client.HTTPException):
        return True
    finally:
        connection.close()


def main():
    checks = Checks()
    bin_dir, stubs_dir = sys.argv[1:3]
    sys.path.insert(0, stubs_dir)
    import grpc
    from mtserve.v1 import translation_pb2 as pb
    from mtserve.v1 import translation_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory(prefix="mtserve_tls_") as tmp:
        ca_one, ca_two = make_ca(tmp, "ca-one"), make_ca(tmp, "ca-two")
        client_ca = make_ca(tmp, "client-ca")
        server_one = make_certificate(tmp, "server-one", ca_one)
        server_two = make_certificate(tmp, "server-two", ca_two)
        client = make_certificate(tmp, "client", client_ca, server=False)
        stranger = make_certificate(tmp, "stranger", ca_two, server=False)
        cert_path, key_path = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        install(server_one, cert_path, key_path)

        # Start-up failures: one line naming the flag, exit status 1.
        encrypted_key = os.path.join(tmp, "encrypted.key")
        subprocess.run(["openssl", "pkey", "-in", server_one.key, "-aes256", "-passout",
                        "pass:secret", "-out", encrypted_key], check=True)
        for flags, message in [
                ([f"--tls_cert={cert_path}"], "--tls_cert and --tls_key go together"),
                ([f"--tls_client_ca={client_ca.cert}"], "--tls_client_ca needs --tls_cert"),
                ([f"--tls_cert={cert_path}", f"--tls_key={tmp}/none.key"], f"{tmp}/none.key"),
                ([f"--tls_cert={cert_path}", f"--tls_key={encrypted_key}"], "--tls_key: no PEM"),
                ([f"--tls_cert={cert_path}", f"--tls_key={server_two.key}"], "does not match"),
                ([f"--tls_cert={cert_path}", f"--tls_key={key_path}",
                  f"--tls_client_ca={key_path}"], "--tls_client_ca: no PEM certificate")]:
            run = subprocess.run([os.path.join(bin_dir, "mtserve"), "--listen=127.0.0.1:0",
                                  "--http_listen=127.0.0.1:0", "--metrics_listen=", *flags],
                                 capture_output=True, text=True, timeout=120)
            checks.expect(f"start-up with {' '.join(flags)} fails naming it: "
                          f"{run.stderr.strip()!r}",
                          run.returncode == 1 and message in run.stderr)

        # A plaintext translation to compare with.
        with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1") as server:
            port = server.grpc_port
            expected = grpc_translate(grpc, pb, pb_grpc, port, plaintext=True)
        checks.expect(f"plaintext translation: {expected!r}",
                      isinstance(expected, str) and expected)

        with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1",
                            f"--tls_cert={cert_path}", f"--tls_key={key_path}",
                            f"--tls_client_ca={client_ca.cert}", "--reload_interval=1s") as server:
            port = server.grpc_port
            http_port = server.http_port
            checks.expect("the start-up line says TLS with client certificates",
                          "client certificates required" in server.stderr())

            # gRPC.
            got = grpc_translate(grpc, pb, pb_grpc, port, ca_one, client)
            checks.expect(f"gRPC over mutual TLS translates: {got!r}",
                          got == expected)
            got = grpc_translate(grpc, pb, pb_grpc, port, plaintext=True)
            checks.expect(f"plaintext gRPC to the TLS port: {got}",
                          got == grpc.StatusCode.UNAVAILABLE)
            got = grpc_translate(grpc, pb, pb_grpc, port, ca_two, client)
            checks.expect(f"gRPC trusting the wrong CA: {got}",
                          got == grpc.StatusCode.UNAVAILABLE)
            got = grpc_translate(grpc, pb, pb_grpc, port, ca_one)
            checks.expect(f"gRPC without a client certificate: {got}",
                          got == grpc.StatusCode.UNAVAILABLE)
            got = grpc_translate(grpc, pb, pb_grpc, port, ca_one, stranger)
            checks.expect(f"gRPC with a client certificate of another CA: {got}",
                          got == grpc.StatusCode.UNAVAILABLE)
            mtclient = [os.path.join(bin_dir, "mtclient"), "translate",
                        f"--server=127.0.0.1:{port}"]
            run = subprocess.run(mtclient + [f"--tls_ca={ca_one.cert}", f"--tls_cert={client.cert}",
                                             f"--tls_key={client.key}"],
                                 input=TEXT + "\n", capture_output=True, text=True)
            checks.expect(f"mtclient over mutual TLS: {run.returncode} {run.stdout!r} "
                          f"{run.stderr!r}",
                          run.returncode == 0 and run.stdout == expected + "\n")
            run = subprocess.run(mtclient + [f"--tls_ca={ca_one.cert}"], input=TEXT + "\n",
                                 capture_output=True, text=True)
            checks.expect(f"mtclient without a client certificate fails: {run.stderr!r}",
                          run.returncode == 1 and "UNAVAILABLE" in run.stderr)

            python_client = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(
                __file__)), "../../../client/python/translate.py"), f"--server=127.0.0.1:{port}",
                f"--stubs_dir={stubs_dir}", f"--tls_ca={ca_one.cert}"]
            run = subprocess.run(python_client + [f"--tls_cert={client.cert}",
                                                  f"--tls_key={client.key}"],
                                 input=TEXT + "\n", capture_output=True, text=True)
            checks.expect(f"client/python/translate.py over mutual TLS: {run.stdout!r} "
                          f"{run.stderr[-300:]!r}",
                          run.returncode == 0 and run.stdout == expected + "\n")

            # HTTPS.
            got = https_result(http_port, ca_one, client)
            checks.expect(f"HTTPS with a client certificate translates: {got!r}",
                          got == expected)
            checks.expect("plaintext HTTP to the TLS port fails",
                          plaintext_http_fails(http_port))
            got = https_result(http_port, ca_two, client)
            checks.expect(f"HTTPS trusting the wrong CA: {got}",
                          got == "SSLCertVerificationError")
            got = https_result(http_port, ca_one)
            checks.expect(f"HTTPS without a client certificate: {got}",
                          got != expected)
            got = https_result(http_port, ca_one, stranger)
            checks.expect(f"HTTPS with a client certificate of another CA: {got}",
                          got != expected)

            # Rotation to CA two's certificate, with connections open on the old one.
            kept_http = http.client.HTTPSConnection("127.0.0.1", http_port, timeout=30,
                                                    context=https_context(ca_one, client))
            checks.expect("a keep-alive HTTPS connection answers",
                          https_translate(kept_http) == expected)
            client_cert, client_key = client.read()
            with open(ca_one.cert, "rb") as f:
                kept_channel = grpc.secure_channel(
                    f"127.0.0.1:{port}",
                    grpc.ssl_channel_credentials(root_certificates=f.read(),
                                                 private_key=client_key,
                                                 certificate_chain=client_cert))
            kept_stub = pb_grpc.TranslatorStub(kept_channel)
            kept_stub.Translate(pb.TranslateRequest(texts=[TEXT.encode()]), timeout=30)
            install(server_two, cert_path, key_path)
            server.process.send_signal(signal.SIGHUP)
            checks.expect("after rotation, new HTTPS handshakes get the new certificate",
                          wait_until(lambda: https_result(http_port, ca_two, client) == expected))
            checks.expect("after rotation, new gRPC handshakes get the new certificate",
                          wait_until(lambda: grpc_translate(grpc, pb, pb_grpc, port, ca_two, client)
                           == expected))
            checks.expect("after rotation, the old certificate is no longer served",
                          https_result(http_port, ca_one, client) == "SSLCertVerificationError")
            checks.expect("the HTTPS connection opened before the rotation still answers",
                          https_translate(kept_http) == expected)
            answer = kept_stub.Translate(pb.TranslateRequest(texts=[TEXT.encode()]), timeout=30)
            checks.expect("the gRPC connection opened before the rotation still answers",
                          answer.translations[0].hypotheses[0].text == expected)
            kept_http.close()
            kept_channel.close()

            # Bad files keep the last good ones.
            with open(cert_path + ".new", "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
            os.replace(cert_path + ".new", cert_path)
            server.process.send_signal(signal.SIGHUP)
            checks.expect("a broken certificate is logged with the flag it came from",
                          wait_until(lambda: "previous one stays in use: --tls_cert" in
                           server.stderr()))
            checks.expect("with a broken certificate file HTTPS keeps the last good certificate",
                          https_result(http_port, ca_two, client) == expected)
            time.sleep(2)  # Two of gRPC's reads of its copy: it must not have changed.
            checks.expect("with a broken certificate file gRPC keeps the last good certificate",
                          grpc_translate(grpc, pb, pb_grpc, port, ca_two, client) == expected)
            # CA one's certificate with server two's key (left at key_path).
            install(server_one, cert_path, os.path.join(tmp, "unused.key"))
            server.process.send_signal(signal.SIGHUP)
            checks.expect("a key that does not match the certificate is logged",
                          wait_until(lambda: "does not match" in server.stderr()))
            checks.expect("with a mismatched key HTTPS keeps the last good certificate",
                          https_result(http_port, ca_two, client) == expected)

            # Polling: the files replaced again, no signal.
            install(server_one, cert_path, key_path)
            checks.expect("files replaced without a signal are picked up by polling (HTTPS)",
                          wait_until(lambda: https_result(http_port, ca_one, client) == expected))
            checks.expect("files replaced without a signal are picked up by polling (gRPC)",
                          wait_until(lambda: grpc_translate(grpc, pb, pb_grpc, port, ca_one, client)
                           == expected))

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
