/* Business serial numbers through the C API: every serial vector of tests/vectors/serials.json
 * (translated into vectors.h) rendered and parsed, every refused format, and bad arguments. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vectors.h"

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static void test_vectors(void) {
    shardid_serial_format *formats[COUNT(SERIAL_FORMATS)];
    size_t i;
    for (i = 0; i < COUNT(SERIAL_FORMATS); i++) {
        size_t len = 0;
        CHECK_STATUS(shardid_serial_format_new(SERIAL_FORMATS[i].format, SERIAL_FORMATS[i].zone, &formats[i]), SHARDID_OK);
        CHECK_STATUS(shardid_serial_format_len(formats[i], &len), SHARDID_OK);
        CHECK(len == SERIAL_FORMATS[i].length, "%s: length %zu", SERIAL_FORMATS[i].format, len);
    }
    for (i = 0; i < COUNT(SERIAL_RENDERS); i++) {
        const struct vector_serial_render *r = &SERIAL_RENDERS[i];
        char buf[65];
        size_t len = 0;
        shardid_status got = shardid_serial_render(formats[r->format], r->number, r->unix_ms, buf, sizeof buf, &len);
        CHECK(got == r->expect, "render %zu: got %s, want %s", i, shardid_status_str(got), shardid_status_str(r->expect));
        if (got == SHARDID_OK && r->serial != NULL) {
            CHECK(strcmp(buf, r->serial) == 0 && len == strlen(r->serial), "render %zu: %s, want %s", i, buf, r->serial);
        }
    }
    for (i = 0; i < COUNT(SERIAL_PARSES); i++) {
        const struct vector_serial_parse *p = &SERIAL_PARSES[i];
        shardid_parsed_serial parsed;
        shardid_status got = shardid_serial_parse(formats[p->format], p->serial, &parsed);
        CHECK(got == p->expect, "parse %zu (%s): got %s, want %s", i, p->serial, shardid_status_str(got), shardid_status_str(p->expect));
        if (got == SHARDID_OK && p->period != NULL) {
            CHECK(parsed.number == p->number, "parse %zu: number %" PRIu64, i, parsed.number);
            CHECK(strcmp(parsed.period, p->period) == 0, "parse %zu: period %s, want %s", i, parsed.period, p->period);
        }
    }
    for (i = 0; i < COUNT(SERIAL_INVALID); i++) {
        shardid_serial_format *f = NULL;
        CHECK_STATUS(shardid_serial_format_new(SERIAL_INVALID[i].format, SERIAL_INVALID[i].zone, &f), SERIAL_INVALID[i].expect);
        CHECK(f == NULL, "no format written on failure");
    }
    for (i = 0; i < COUNT(SERIAL_FORMATS); i++) {
        shardid_serial_format_free(formats[i]);
    }
}

static void test_bad_arguments(void) {
    shardid_serial_format *f = NULL;
    shardid_parsed_serial parsed;
    char small[8], buf[65];
    size_t len = 0;
    CHECK_STATUS(shardid_serial_format_new(NULL, "UTC", &f), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_format_new("{seq:3}", NULL, &f), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_format_new("{seq:3}", "UTC", NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_format_new("\xff{seq:3}", "UTC", &f), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_serial_format_new("ORD-{yyyy}{MM}{dd}-{seq:6}{check}", "Asia/Shanghai", &f), SHARDID_OK);
    /* 2026-11-25 00:00 in Shanghai. */
    CHECK_STATUS(shardid_serial_render(f, 123, UINT64_C(1795536000000), buf, sizeof buf, &len), SHARDID_OK);
    CHECK(strcmp(buf, "ORD-20261125-0001237") == 0 && len == 20, "%s", buf);
    CHECK_STATUS(shardid_serial_render(f, 123, UINT64_C(1795536000000), small, sizeof small, &len), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_serial_render(f, 123, UINT64_C(1795536000000), buf, 20, &len), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_serial_render(f, 123, UINT64_C(1795536000000), NULL, 65, &len), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_render(NULL, 123, UINT64_C(1795536000000), buf, sizeof buf, &len), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_render(f, 1000000, UINT64_C(1795536000000), buf, sizeof buf, &len), SHARDID_ERR_SERIAL_OVERFLOW);
    CHECK_STATUS(shardid_serial_render(f, 0, UINT64_C(1795536000000), buf, sizeof buf, &len), SHARDID_ERR_INVALID_SERIAL);
    CHECK_STATUS(shardid_serial_render(f, 1, 0, buf, sizeof buf, &len), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_serial_parse(f, "ORD-20261125-0001237", &parsed), SHARDID_OK);
    CHECK(parsed.number == 123 && strcmp(parsed.period, "2026-11-25") == 0 && parsed.year == 2026 && parsed.month == 11 && parsed.day == 25 && parsed.hour == -1 && parsed.week == -1,
          "%" PRIu64 " %s %d", parsed.number, parsed.period, parsed.year);
    CHECK_STATUS(shardid_serial_parse(f, "ORD-20261125-0001327", &parsed), SHARDID_ERR_INVALID_SERIAL);
    CHECK_STATUS(shardid_serial_parse(f, "ORD-2026\xff" "125-0001237", &parsed), SHARDID_ERR_INVALID_SERIAL);
    CHECK_STATUS(shardid_serial_parse(f, NULL, &parsed), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_serial_parse(f, "ORD-20261125-0001237", NULL), SHARDID_ERR_NULL_ARGUMENT);
    shardid_serial_format_free(f);
    shardid_serial_format_free(NULL);
}

int main(void) {
    test_vectors();
    test_bad_arguments();
    return check_finish("serials");
}
