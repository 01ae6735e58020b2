#!/usr/bin/env python3
"""Translates stdin with an mtserve server: one line in, one translation out, in order.

A minimal example of the mtserve.v1.Translator gRPC API. By default every batch of lines is one
Translate call; with --stream all lines go through a single TranslateStream call, each tagged
with its line number, and the answers (which arrive as each text finishes, in any order) are
written back in input order.

With --target, each line goes to the served model that reads its language into the target:
--source names the language of every line, or auto (the default) has the server detect each
line's (the language detected and its confidence go to stderr). A line that no served model reads
into the target is reported on stderr with its number and gives empty output lines; the other
lines are translated, and the exit status is 1.

The stubs are generated from proto/mtserve/v1/translation.proto (see README.md): put their
directory on PYTHONPATH or pass it with --stubs_dir.

  printf 'A man is riding a bike.\\n' | client/python/translate.py --server=127.0.0.1:50051
"""

import argparse
import sys


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT of mtserve")
    parser.add_argument("--model", default="", help="model name; empty: the server's default")
    parser.add_argument("--source", default="",
                        help="with --target: the language of every line, or auto (the default) "
                             "to detect each line's")
    parser.add_argument("--target", default="",
                        help="translate into this language with the model of each line's "
                             "language, instead of --model's")
    parser.add_argument("--beam_size", type=int, default=1, help="1 is greedy search")
    parser.add_argument("--num_hypotheses", type=int, default=1,
                        help="translations printed per line, best first")
    parser.add_argument("--with_scores", action="store_true",
                        help="prefix each translation with its score and a tab")
    parser.add_argument("--no_split_sentences", action="store_true",
                        help="take each line as one sentence (the server splits texts by default)")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds each call may take (the whole stream with --stream)")
    parser.add_argument("--batch_size", type=int, default=32, help="lines per Translate call")
    parser.add_argument("--stream", action="store_true",
                        help="send the lines one by one through TranslateStream")
    parser.add_argument("--tls_ca",
                        help="PEM file of the CAs that sign the server's certificate: use TLS")
    parser.add_argument("--tls_cert", help="PEM client certificate, for mutual TLS (with --tls_key)")
    parser.add_argument("--tls_key", help="PEM private key of --tls_cert")
    parser.add_argument("--api_key",
                        help="API key, for a server with --api_keys_file (sent as "
                             "authorization: Bearer KEY)")
    parser.add_argument("--stubs_dir", help="directory holding mtserve/v1/translation_pb2*.py")
    args = parser.parse_args()
    if args.batch_size < 1:
        parser.error("--batch_size must be >= 1")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls_cert and --tls_key go together")
    if args.model and args.target:
        parser.error("give --model or --target, not both: --target sends each line to the model "
                     "of its language")
    if args.source and not args.target:
        parser.error("--source needs --target")
    return args


def format_translation(translation, args):
    """The lines of one text's translation, as mttranslate writes them."""
    # Exactly num_hypotheses lines per text (an empty text may come back with fewer hypotheses).
    hypotheses = list(translation.hypotheses)
    hypotheses += [None] * (args.num_hypotheses - len(hypotheses))
    lines = []
    for h in hypotheses:
        text = h.text if h is not None else ""
        score = h.score if h is not None else 0.0
        lines.append(f"{score:.6f}\t{text}" if args.with_scores else text)
    return lines


def code_name(grpc, code):
    """The name of a status code sent as a number (Error.code)."""
    return next((c.name for c in grpc.StatusCode if c.value[0] == code), str(code))


class Output:
    """The lines to print, and what stderr says of each text: its detected language when the
    source is auto, or why it was not translated (then empty lines keep the output in step)."""

    def __init__(self, grpc, args):
        self.grpc, self.args = grpc, args
        self.lines = []
        self.failed = 0
        self.detected = bool(args.target) and args.source in ("", "auto")

    def add(self, number, translation, error=None):
        """Text `number` (1-based): its Translation, or the Error of a stream's answer."""
        if error is None and translation.HasField("error"):
            error = translation.error
        if error is not None:
            print(f"error: {code_name(self.grpc, error.code)}: line {number}: {error.message}",
                  file=sys.stderr)
            self.failed += 1
            self.lines += [""] * max(1, self.args.num_hypotheses)
            return
        if self.detected and translation.HasField("detected_language"):
            language = translation.detected_language
            print(f"line {number}: detected {language.language} {language.confidence:.1f} "
                  f"({translation.model})", file=sys.stderr)
        self.lines += format_translation(translation, self.args)


def read_file(path):
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def open_channel(grpc, args):
    """A TLS channel with --tls_ca (and a client certificate with --tls_cert), else plaintext."""
    if not (args.tls_ca or args.tls_cert):
        return grpc.insecure_channel(args.server)
    credentials = grpc.ssl_channel_credentials(root_certificates=read_file(args.tls_ca),
                                               private_key=read_file(args.tls_key),
                                               certificate_chain=read_file(args.tls_cert))
    return grpc.secure_channel(args.server, credentials)


def main():
    args = parse_args()
    if args.stubs_dir:
        sys.path.insert(0, args.stubs_dir)
    import grpc
    from mtserve.v1 import translation_pb2 as pb
    from mtserve.v1 import translation_pb2_grpc as pb_grpc

    # Lines end at "\n" only, as in mttranslate. Texts go as UTF-8 bytes (the API's texts are
    # `bytes`, so the server itself reports text that is not valid UTF-8).
    texts = sys.stdin.buffer.read().split(b"\n")
    if texts and texts[-1] == b"":
        texts.pop()
    options = pb.DecodingOptions(beam_size=args.beam_size, num_hypotheses=args.num_hypotheses,
                                 return_scores=args.with_scores,
                                 split_sentences=not args.no_split_sentences)

    metadata = [("authorization", f"Bearer {args.api_key}")] if args.api_key else None
    output = Output(grpc, args)
    languages = dict(model=args.model, source_language=args.source, target_language=args.target)
    with open_channel(grpc, args) as channel:
        stub = pb_grpc.TranslatorStub(channel)
        try:
            if not args.stream:
                for start in range(0, len(texts), args.batch_size):
                    request = pb.TranslateRequest(options=options, **languages,
                                                  texts=texts[start:start + args.batch_size])
                    response = stub.Translate(request, timeout=args.timeout, metadata=metadata)
                    for i, translation in enumerate(response.translations):
                        output.add(start + i + 1, translation)
            else:
                requests = (pb.TranslateStreamRequest(id=str(i), text=text, options=options,
                                                      **languages)
                            for i, text in enumerate(texts))
                answers = [None] * len(texts)
                for answer in stub.TranslateStream(requests, timeout=args.timeout,
                                                   metadata=metadata):
                    # A failed text does not end the stream: it is reported with the others.
                    answers[int(answer.id)] = answer
                for i, answer in enumerate(answers):
                    if answer is None:
                        print(f"error: no answer for line {i + 1}", file=sys.stderr)
                        return 1
                    output.add(i + 1, answer.translation,
                               answer.error if answer.HasField("error") else None)
        except grpc.RpcError as e:
            print(f"error: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1

    sys.stdout.buffer.write("".join(line + "\n" for line in output.lines).encode("utf-8"))
    if output.failed:
        print(f"{output.failed} of {len(texts)} lines not translated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
