#!/usr/bin/env python3
"""gRPC connections on a real mtserve: the bound on each connection's calls
(--grpc_max_streams_per_connection), idle connections closed (--grpc_idle_timeout), and clients
that ping too often sent away (--grpc_min_ping_interval), each asserted as events seen by a
client, never as times.

Usage: grpc_connections_test.py BIN_DIR STUBS_DIR [-- unittest arguments]
"""
import os
import queue
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


TEXT = b"A man is riding a bike."
# Long enough for any event below on a loaded machine; a test waits this long only if it fails.
PATIENCE = 120


def channel(port, **options):
    """A channel with a connection of its own (channels with the same arguments share one)."""
    return grpc.insecure_channel(
        f"127.0.0.1:{port}",
        options=[("grpc.use_local_subchannel_pool", 1), *options.items()])


class States:
    """The connectivity states a channel goes through, from now on."""

    def __init__(self, ch):
        self.states = queue.Queue()
        ch.subscribe(self.states.put, try_to_connect=True)

    def wait_for(self, wanted, timeout=PATIENCE):
        """Waits until the channel reaches one of `wanted`; returns the states seen on the way."""
        seen = []
        while not seen or seen[-1] not in wanted:
            seen.append(self.states.get(timeout=timeout))
        return seen


class OpenStream:
    """A TranslateStream call kept open: one text sent and answered, then nothing until close."""

    def __init__(self, stub):
        self.requests = queue.Queue()
        self.requests.put(pb.TranslateStreamRequest(id="1", text=TEXT))
        self.answers = stub.TranslateStream(iter(self.requests.get, None), timeout=PATIENCE)
        self.first = next(self.answers)

    def close(self):
        self.requests.put(None)
        return list(self.answers)


def translate(stub, timeout=PATIENCE):
    """The status code of one Translate call."""
    try:
        stub.Translate(pb.TranslateRequest(texts=[TEXT]), timeout=timeout)
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


class StreamsPerConnectionTest(e2e_suite.MtserveTestCase):
    def test_a_call_past_the_bound_waits_for_one_to_end(self):
        s = self.start_mtserve("--workers=1", "--grpc_max_streams_per_connection=2")
        full = channel(s.grpc_port)
        stub = pb_grpc.TranslatorStub(full)
        streams = [OpenStream(stub) for _ in range(2)]
        for stream in streams:
            self.assertTrue(stream.first.HasField("translation"), stream.first)
        # A third call on the same connection cannot start while both streams are open.
        self.assertEqual(translate(stub, timeout=3), grpc.StatusCode.DEADLINE_EXCEEDED)
        # Another connection is not held up.
        other = channel(s.grpc_port)
        self.assertEqual(translate(pb_grpc.TranslatorStub(other)), grpc.StatusCode.OK)
        # Once a stream ends, a call waiting for its place starts.
        waiting = []
        caller = threading.Thread(target=lambda: waiting.append(translate(stub)))
        caller.start()
        streams[0].close()
        caller.join()
        self.assertEqual(waiting, [grpc.StatusCode.OK])
        streams[1].close()
        full.close()
        other.close()


class IdleConnectionTest(e2e_suite.MtserveTestCase):
    def test_an_idle_connection_is_closed(self):
        s = self.start_mtserve("--workers=1", "--grpc_idle_timeout=1s")
        ch = channel(s.grpc_port)
        states = States(ch)
        self.assertEqual(translate(pb_grpc.TranslatorStub(ch)), grpc.StatusCode.OK)
        states.wait_for({grpc.ChannelConnectivity.READY})
        # GOAWAY once idle: the client's channel goes idle, with no call of its own failing.
        seen = states.wait_for({grpc.ChannelConnectivity.IDLE})
        self.assertNotIn(grpc.ChannelConnectivity.SHUTDOWN, seen)
        self.assertEqual(translate(pb_grpc.TranslatorStub(ch)), grpc.StatusCode.OK,
                         "a closed idle connection is reopened by the next call")
        ch.close()


class PingAbuseTest(e2e_suite.MtserveTestCase):
    def test_a_client_pinging_too_often_is_sent_away_and_a_polite_one_is_not(self):
        s = self.start_mtserve(
            "--workers=1", "--grpc_min_ping_interval=5s", "--grpc_idle_timeout=0")
        pings = {"grpc.keepalive_permit_without_calls": 1,
                 "grpc.http2.max_pings_without_data": 0}
        polite = channel(s.grpc_port, **{"grpc.keepalive_time_ms": 10000, **pings})
        abusive = channel(s.grpc_port, **{"grpc.keepalive_time_ms": 1000, **pings})
        polite_states, abusive_states = States(polite), States(abusive)
        for ch in (polite, abusive):
            self.assertEqual(translate(pb_grpc.TranslatorStub(ch)), grpc.StatusCode.OK)
        polite_states.wait_for({grpc.ChannelConnectivity.READY})
        abusive_states.wait_for({grpc.ChannelConnectivity.READY})
        # Pings every second against 5 s allowed: GOAWAY (too_many_pings) after 2 strikes.
        abusive_states.wait_for({grpc.ChannelConnectivity.IDLE,
                                 grpc.ChannelConnectivity.TRANSIENT_FAILURE})
        self.assertTrue(polite_states.states.empty(),
                        "the polite client's connection is still open: no state change")
        polite.close()
        abusive.close()


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
