"""What the Python tests of the HTTP front end share: one request on its own connection, and checks
printed as "ok   NAME" or "FAIL NAME: DETAIL" and counted."""
import http.client
import json


def call(port, method, path, body=None, headers=None, timeout=120):
    """(status, headers, body bytes) of one request on a new connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


class Checks:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def expect(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""))
        return condition

    def error(self, name, result, status, code, *needles):
        """An error answer: this HTTP status, JSON {"code", "message"} with the message holding
        every needle."""
        got_status, headers, body = result
        try:
            error = json.loads(body)
        except ValueError:
            error = None
        good = (got_status == status and headers.get("Content-Type") == "application/json"
                and isinstance(error, dict) and set(error) == {"code", "message"}
                and error["code"] == code and all(n in error["message"] for n in needles))
        return self.expect(f"{name}: {status} {code}", good,
                           f"got {got_status} {body[:400]!r}, want {status} {code} {needles}")
