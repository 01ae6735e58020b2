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
  are picked up without a signal, by polling.

Usage: tls_test.py BIN_DIR STUBS_DIR [-- UNITTEST ARGUMENTS]
"""
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402
from mtserve_process import MtserveProcess, wait_until  # noqa: E402
from test_certificates import install, make_ca, make_certificate  # noqa: E402

TEXT = "A man is riding a bike."


class Pki:
    """The certificates, made once for the suite: CAs one and two (servers), a client CA, a
    server certificate of each server CA, a client certificate of the client CA, a "stranger"
    client certificate of CA two; and `expected`, TEXT's translation over plaintext gRPC, which
    the TLS ones must equal. Set by setUpModule."""


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()
    tmp = e2e_suite.module_temp_dir("tls")
    Pki.dir = tmp
    Pki.ca_one, Pki.ca_two = make_ca(tmp, "ca-one"), make_ca(tmp, "ca-two")
    Pki.client_ca = make_ca(tmp, "client-ca")
    Pki.server_one = make_certificate(tmp, "server-one", Pki.ca_one)
    Pki.server_two = make_certificate(tmp, "server-two", Pki.ca_two)
    Pki.client = make_certificate(tmp, "client", Pki.client_ca, server=False)
    Pki.stranger = make_certificate(tmp, "stranger", Pki.ca_two, server=False)
    # The translation over plaintext gRPC that the TLS ones must equal.
    with MtserveProcess(binary("mtserve"), "--workers=1") as server:
        Pki.expected = grpc_translate(server.grpc_port, plaintext=True)


def grpc_translate(port, ca=None, client=None, plaintext=False):
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


def kept_grpc_stub(port, ca, client):
    """(channel, stub) of a gRPC connection that trusts `ca` and presents `client`."""
    client_cert, client_key = client.read()
    with open(ca.cert, "rb") as f:
        channel = grpc.secure_channel(
            f"127.0.0.1:{port}",
            grpc.ssl_channel_credentials(root_certificates=f.read(), private_key=client_key,
                                         certificate_chain=client_cert))
    return channel, pb_grpc.TranslatorStub(channel)


class TlsTestCase(e2e_suite.MtserveTestCase):
    @staticmethod
    def tls_flags(directory):
        """mtserve's TLS flags with server one's certificate installed into `directory` as
        tls.crt and tls.key (a test may replace them); (flags, cert path, key path)."""
        cert_path, key_path = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
        install(Pki.server_one, cert_path, key_path)
        return (f"--tls_cert={cert_path}", f"--tls_key={key_path}",
                f"--tls_client_ca={Pki.client_ca.cert}"), cert_path, key_path


class StartupTest(TlsTestCase):
    def test_startup_refuses_what_cannot_work_naming_the_flag(self):
        tmp = self.temp_dir()
        _, cert_path, key_path = self.tls_flags(tmp)
        encrypted_key = os.path.join(tmp, "encrypted.key")
        subprocess.run(["openssl", "pkey", "-in", Pki.server_one.key, "-aes256", "-passout",
                        "pass:secret", "-out", encrypted_key], check=True)
        for flags, message in [
                ([f"--tls_cert={cert_path}"], "--tls_cert and --tls_key go together"),
                ([f"--tls_client_ca={Pki.client_ca.cert}"], "--tls_client_ca needs --tls_cert"),
                ([f"--tls_cert={cert_path}", f"--tls_key={tmp}/none.key"], f"{tmp}/none.key"),
                ([f"--tls_cert={cert_path}", f"--tls_key={encrypted_key}"], "--tls_key: no PEM"),
                ([f"--tls_cert={cert_path}", f"--tls_key={Pki.server_two.key}"],
                 "does not match"),
                ([f"--tls_cert={cert_path}", f"--tls_key={key_path}",
                  f"--tls_client_ca={key_path}"], "--tls_client_ca: no PEM certificate")]:
            with self.subTest(" ".join(flags)):
                run = subprocess.run([binary("mtserve"), "--listen=127.0.0.1:0",
                                      "--http_listen=127.0.0.1:0", "--metrics_listen=", *flags],
                                     capture_output=True, text=True, timeout=120)
                self.assertEqual(run.returncode, 1, run.stderr)
                self.assertIn(message, run.stderr)


class MutualTlsTest(TlsTestCase):
    """One server requiring client certificates of the client CA."""

    @classmethod
    def setUpClass(cls):
        flags, _, _ = cls.tls_flags(cls.class_temp_dir())
        cls.server_flags = ("--workers=1", *flags)
        super().setUpClass()
        cls.port, cls.http_port = cls.server.grpc_port, cls.server.http_port

    def test_plaintext_translation_to_compare_with(self):
        self.assertIsInstance(Pki.expected, str)
        self.assertTrue(Pki.expected, "an empty translation")

    def test_the_startup_line_says_tls_with_client_certificates(self):
        self.assertIn("client certificates required", self.server.stderr())

    def test_grpc_over_mutual_tls_translates(self):
        self.assertEqual(grpc_translate(self.port, Pki.ca_one, Pki.client), Pki.expected)

    def test_grpc_without_the_right_credentials_fails(self):
        for name, options in [
                ("plaintext to the TLS port", {"plaintext": True}),
                ("trusting the wrong CA", {"ca": Pki.ca_two, "client": Pki.client}),
                ("without a client certificate", {"ca": Pki.ca_one}),
                ("with a client certificate of another CA",
                 {"ca": Pki.ca_one, "client": Pki.stranger})]:
            with self.subTest(name):
                self.assertEqual(grpc_translate(self.port, **options),
                                 grpc.StatusCode.UNAVAILABLE)

    def mtclient(self, *flags):
        return subprocess.run([binary("mtclient"), "translate", f"--server=127.0.0.1:{self.port}",
                               f"--tls_ca={Pki.ca_one.cert}", *flags], input=TEXT + "\n",
                              capture_output=True, text=True, timeout=120)

    def test_mtclient_over_mutual_tls_translates(self):
        run = self.mtclient(f"--tls_cert={Pki.client.cert}", f"--tls_key={Pki.client.key}")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, Pki.expected + "\n")

    def test_mtclient_without_a_client_certificate_fails(self):
        run = self.mtclient()
        self.assertEqual(run.returncode, 1, f"{run.stdout!r} {run.stderr!r}")
        self.assertIn("UNAVAILABLE", run.stderr)

    def test_the_python_client_over_mutual_tls_translates(self):
        run = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "../../../client/python/translate.py"),
             f"--server=127.0.0.1:{self.port}", f"--stubs_dir={e2e_suite.ARGS.stubs_dir}",
             f"--tls_ca={Pki.ca_one.cert}", f"--tls_cert={Pki.client.cert}",
             f"--tls_key={Pki.client.key}"],
            input=TEXT + "\n", capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-300:])
        self.assertEqual(run.stdout, Pki.expected + "\n", run.stderr[-300:])

    def test_https_with_a_client_certificate_translates(self):
        self.assertEqual(https_result(self.http_port, Pki.ca_one, Pki.client), Pki.expected)

    def test_plaintext_http_to_the_tls_port_fails(self):
        self.assertTrue(plaintext_http_fails(self.http_port))

    def test_https_without_the_right_credentials_fails(self):
        with self.subTest("trusting the wrong CA"):
            self.assertEqual(https_result(self.http_port, Pki.ca_two, Pki.client),
                             "SSLCertVerificationError")
        with self.subTest("without a client certificate"):
            self.assertNotEqual(https_result(self.http_port, Pki.ca_one), Pki.expected)
        with self.subTest("with a client certificate of another CA"):
            self.assertNotEqual(https_result(self.http_port, Pki.ca_one, Pki.stranger),
                                Pki.expected)


class RotationTest(TlsTestCase):
    """Each test a server of its own whose certificate files it replaces."""

    def start(self):
        """A server on server one's certificate (files re-read every second); (server, cert
        path, key path)."""
        flags, cert_path, key_path = self.tls_flags(self.temp_dir())
        server = self.start_mtserve("--workers=1", *flags, "--reload_interval=1s")
        return server, cert_path, key_path

    def test_sighup_rotation_serves_the_new_certificate_and_keeps_open_connections(self):
        server, cert_path, key_path = self.start()
        port, http_port = server.grpc_port, server.http_port
        kept_http = http.client.HTTPSConnection("127.0.0.1", http_port, timeout=30,
                                                context=https_context(Pki.ca_one, Pki.client))
        self.addCleanup(kept_http.close)
        self.assertEqual(https_translate(kept_http), Pki.expected,
                         "a keep-alive HTTPS connection answers")
        kept_channel, kept_stub = kept_grpc_stub(port, Pki.ca_one, Pki.client)
        self.addCleanup(kept_channel.close)
        kept_stub.Translate(pb.TranslateRequest(texts=[TEXT.encode()]), timeout=30)

        install(Pki.server_two, cert_path, key_path)
        server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(lambda: https_result(http_port, Pki.ca_two, Pki.client)
                                   == Pki.expected),
                        "new HTTPS handshakes get the new certificate")
        self.assertTrue(wait_until(lambda: grpc_translate(port, Pki.ca_two, Pki.client)
                                   == Pki.expected),
                        "new gRPC handshakes get the new certificate")
        self.assertEqual(https_result(http_port, Pki.ca_one, Pki.client),
                         "SSLCertVerificationError", "the old certificate is no longer served")
        self.assertEqual(https_translate(kept_http), Pki.expected,
                         "the HTTPS connection opened before the rotation")
        answer = kept_stub.Translate(pb.TranslateRequest(texts=[TEXT.encode()]), timeout=30)
        self.assertEqual(answer.translations[0].hypotheses[0].text, Pki.expected,
                         "the gRPC connection opened before the rotation")

    def test_bad_files_keep_the_last_good_certificate_and_are_logged(self):
        server, cert_path, key_path = self.start()
        port, http_port = server.grpc_port, server.http_port
        with open(cert_path + ".new", "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        os.replace(cert_path + ".new", cert_path)
        server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(lambda: "previous one stays in use: --tls_cert"
                                   in server.stderr()),
                        f"a broken certificate is logged with its flag:\n{server.stderr()}")
        self.assertEqual(https_result(http_port, Pki.ca_one, Pki.client), Pki.expected,
                         "HTTPS keeps the last good certificate")
        time.sleep(2)  # Two of gRPC's reads of its copy: it must not have changed.
        self.assertEqual(grpc_translate(port, Pki.ca_one, Pki.client), Pki.expected,
                         "gRPC keeps the last good certificate")
        # CA two's certificate with server one's key (left at key_path).
        install(Pki.server_two, cert_path, os.path.join(self.temp_dir(), "unused.key"))
        server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(lambda: "does not match" in server.stderr()),
                        f"a key that does not match the certificate is logged:\n"
                        f"{server.stderr()}")
        self.assertEqual(https_result(http_port, Pki.ca_one, Pki.client), Pki.expected,
                         "with a mismatched key HTTPS keeps the last good certificate")

    def test_files_replaced_without_a_signal_are_picked_up_by_polling(self):
        server, cert_path, key_path = self.start()
        install(Pki.server_two, cert_path, key_path)
        self.assertTrue(wait_until(lambda: https_result(server.http_port, Pki.ca_two, Pki.client)
                                   == Pki.expected), "HTTPS")
        self.assertTrue(wait_until(lambda: grpc_translate(server.grpc_port, Pki.ca_two,
                                                          Pki.client) == Pki.expected), "gRPC")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
