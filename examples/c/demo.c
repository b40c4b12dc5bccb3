/* Makes and decodes IDs through the installed header and library:
 *   cc demo.c $(pkg-config --cflags --libs shardid) */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include <shardid.h>

static int fail(const char *what, shardid_status status) {
    fprintf(stderr, "%s: %s\n", what, shardid_status_str(status));
    return 1;
}

int main(void) {
    shardid_layout layout = shardid_layout_instagram();
    shardid_generator *gen = NULL;
    shardid_status status;
    uint64_t ids[3];
    int i;

    status = shardid_generator_new(&layout, 5, &gen);
    if (status != SHARDID_OK) return fail("shardid_generator_new", status);
    status = shardid_generator_next_batch(gen, ids, 3);
    shardid_generator_free(gen);
    if (status != SHARDID_OK) return fail("shardid_generator_next_batch", status);

    printf("C (libshardid %s), Instagram layout, shard 5:\n", shardid_version());
    for (i = 0; i < 3; i++) {
        shardid_parts parts;
        char when[32];
        time_t seconds;
        status = shardid_decode(&layout, ids[i], &parts);
        if (status != SHARDID_OK) return fail("shardid_decode", status);
        seconds = (time_t)(parts.timestamp_ms / 1000);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", gmtime(&seconds));
        printf("  %" PRIu64 "  ->  %s.%03uZ  shard %" PRIu64 "  sequence %" PRIu64 "\n", ids[i],
               when, (unsigned)(parts.timestamp_ms % 1000), parts.shard, parts.sequence);
    }
    return 0;
}
