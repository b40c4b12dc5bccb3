/* A panic inside libshardid is a status, not an abort: built against a libshardid made with
 * the `panic-probe` feature (tests/c/run.sh), whose shardid_panic_probe() panics behind the
 * panic boundary on purpose. The process must get SHARDID_ERR_PANIC and go on working. */
#include <stdio.h>
#include <string.h>

#include "shardid.h"

/* Not in the header: only the test build has it. */
shardid_status shardid_panic_probe(void);

int main(void) {
    shardid_layout layout = shardid_layout_twitter();
    shardid_generator *generator = NULL;
    uint64_t id = 0;
    shardid_status status = shardid_panic_probe();
    if (status != SHARDID_ERR_PANIC) {
        fprintf(stderr, "shardid_panic_probe returned %d, not SHARDID_ERR_PANIC\n", (int)status);
        return 1;
    }
    if (strncmp(shardid_status_str(status), "SHARDID_ERR_PANIC", 17) != 0) {
        fprintf(stderr, "wrong text: %s\n", shardid_status_str(status));
        return 1;
    }
    /* Twice: the first panic left nothing broken behind. */
    if (shardid_panic_probe() != SHARDID_ERR_PANIC) return 1;
    if (shardid_generator_new(&layout, 7, &generator) != SHARDID_OK) return 1;
    if (shardid_generator_next(generator, &id) != SHARDID_OK || id == 0) return 1;
    shardid_generator_free(generator);
    printf("panic caught as SHARDID_ERR_PANIC, then an ID: %llu\n", (unsigned long long)id);
    return 0;
}
