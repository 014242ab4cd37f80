"""Validates generated texts against their JSON Schemas with Debian's python3-jsonschema.

Input: a JSON-lines file of {"name", "schema", "text"}. Output (stdout): one JSON object
{"checked": n, "invalid_count": k, "invalid": [first 20 failures]}. Formats are checked
(FormatChecker); python3-jsonschema in Debian 12 has no checker for date-time and time (they
need rfc3339-validator), so those two are checked with the standard library's fromisoformat
after an RFC 3339 shape test.
"""
import datetime
import json
import re
import sys

import jsonschema

checker = jsonschema.FormatChecker()
RFC3339_TIME = r"\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"


@checker.checks("date-time", raises=ValueError)
def is_date_time(s):
    if not isinstance(s, str):
        return True
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt]" + RFC3339_TIME, s):
        return False
    datetime.datetime.fromisoformat(s.replace("z", "Z"))
    return True


@checker.checks("time", raises=ValueError)
def is_time(s):
    if not isinstance(s, str):
        return True
    if not re.fullmatch(RFC3339_TIME, s):
        return False
    datetime.time.fromisoformat(s.replace("z", "Z"))
    return True


def main(path):
    bad, checked = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            checked += 1
            try:
                instance = json.loads(case["text"])
            except ValueError as e:
                bad.append({"name": case["name"], "text": case["text"], "error": "not JSON: %s" % e})
                continue
            errors = list(jsonschema.Draft202012Validator(case["schema"], format_checker=checker).iter_errors(instance))
            if errors:
                bad.append({"name": case["name"], "text": case["text"], "error": errors[0].message})
    print(json.dumps({"checked": checked, "invalid_count": len(bad), "invalid": bad[:20]}))


if __name__ == "__main__":
    main(sys.argv[1])
