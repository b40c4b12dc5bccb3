"""What tests/js/entry-points.mjs answers on PostgreSQL (test_segments.py) and on MariaDB
(tests/mysql/test_node.py): the entry points that create a tag, a serial tag and a topic behave
alike whatever the URL's database."""

ENTRY_POINTS = {
    "tag": {
        "created": "no error",
        "again": "no error",
        "first": "no error",
        "empty": "INVALID_ARGUMENT",
        "long": "INVALID_ARGUMENT",
        "notText": "INVALID_ARGUMENT",
        "missing": "DATABASE naming the DDL",
        "down": "DATABASE_UNREACHABLE",
    },
    "serials": {
        "created": "no error",
        "again": "no error",
        "first": "no error",
        "empty": "INVALID_ARGUMENT",
        "missing": "DATABASE naming the DDL",
        "down": "DATABASE_UNREACHABLE",
    },
    "dictionary": {
        "created": "no error",
        "again": "no error",
        "empty": "INVALID_ARGUMENT",
        "missing": "DATABASE naming the DDL",
        "down": "DATABASE_UNREACHABLE",
    },
}
