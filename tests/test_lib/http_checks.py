"""Checks printed as "ok   NAME" or "FAIL NAME: DETAIL" and counted, for the Python suites not
yet written with unittest (http_api, http_framing, libretranslate, openapi, tls); the others use
e2e_suite.py, which holds the request and the error shape both use."""
from e2e_suite import call, error_answer_problem  # noqa: F401  (call: the suites import it here)


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
        problem = error_answer_problem(result, status, code, *needles)
        return self.expect(f"{name}: {status} {code}", problem is None, problem or "")
