/* A minimal test harness for the C tests: CHECK counts and reports failures, and
 * check_finish() prints a summary and gives the exit status. */
#ifndef SHARDID_TEST_CHECK_H
#define SHARDID_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

#include "shardid.h"

static unsigned long check_passed;
static unsigned long check_failed;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) {                                                             \
            check_passed++;                                                     \
        } else {                                                                \
            check_failed++;                                                     \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

/* Checks that a call returned the expected status, naming both on failure. */
#define CHECK_STATUS(call, expected)                                            \
    do {                                                                        \
        shardid_status check_got_ = (call);                                     \
        shardid_status check_want_ = (expected);                                \
        CHECK(check_got_ == check_want_, "%s: got %s, want %s", #call,          \
              shardid_status_str(check_got_), shardid_status_str(check_want_)); \
    } while (0)

static int check_finish(const char *suite) {
    printf("%s: %lu checks passed, %lu failed\n", suite, check_passed, check_failed);
    return (check_failed > 0 || check_passed == 0) ? 1 : 0;
}

#endif /* SHARDID_TEST_CHECK_H */
