"""Prints a pytest JUnit report as cargo's "test result:" line, which scripts/test.sh adds up.

usage: junit_result.py REPORT.xml LABEL [EXTRA_PASSED EXTRA_FAILED]
"""

import sys
import xml.etree.ElementTree as ET

suite = ET.parse(sys.argv[1]).getroot()
suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
tests, failed = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
skipped = int(suite.get("skipped"))
extra_passed, extra_failed = (int(x) for x in sys.argv[3:5]) if len(sys.argv) > 3 else (0, 0)
passed, failed = tests - failed - skipped + extra_passed, failed + extra_failed
verdict = "ok" if failed == 0 else "FAILED"
print(f"\ntest result: {verdict}. {passed} passed; {failed} failed; {skipped} skipped ({sys.argv[2]})")
