/* Several threads share one generator (and a second handle for the same shard): millions of
 * IDs, zero duplicates, each thread's IDs strictly increasing. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

#define THREADS 4
#define PER_THREAD 1000000

struct worker {
    const shardid_generator *gen;
    int batch; /* use shardid_generator_next_batch instead of one call per ID */
    uint64_t *ids;
    shardid_status status;
};

static void *work(void *arg) {
    struct worker *w = arg;
    size_t i;
    w->status = SHARDID_OK;
    if (w->batch) {
        for (i = 0; i < PER_THREAD && w->status == SHARDID_OK; i += 1000) {
            w->status = shardid_generator_next_batch(w->gen, w->ids + i, 1000);
        }
    } else {
        for (i = 0; i < PER_THREAD && w->status == SHARDID_OK; i++) {
            w->status = shardid_generator_next(w->gen, &w->ids[i]);
        }
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void) {
    shardid_layout layout = shardid_layout_twitter();
    shardid_generator *first = NULL, *second = NULL;
    struct worker workers[THREADS];
    pthread_t threads[THREADS];
    uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
    size_t i, t, duplicates = 0, decreasing = 0;

    CHECK(all != NULL, "out of memory");
    if (all == NULL) return check_finish("threads");
    CHECK_STATUS(shardid_generator_new(&layout, 17, &first), SHARDID_OK);
    /* A second handle for the same shard shares the state: still no duplicates. */
    CHECK_STATUS(shardid_generator_new(&layout, 17, &second), SHARDID_OK);
    for (t = 0; t < THREADS; t++) {
        workers[t].gen = t % 2 ? second : first;
        workers[t].batch = t == THREADS - 1;
        workers[t].ids = all + t * PER_THREAD;
        CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0, "pthread_create");
    }
    for (t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(workers[t].status == SHARDID_OK, "thread %zu: %s", t,
              shardid_status_str(workers[t].status));
        for (i = 1; i < PER_THREAD; i++) {
            decreasing += workers[t].ids[i] <= workers[t].ids[i - 1];
        }
    }
    CHECK(decreasing == 0, "%zu IDs not above their thread's previous one", decreasing);
    qsort(all, (size_t)THREADS * PER_THREAD, sizeof(uint64_t), compare);
    for (i = 1; i < (size_t)THREADS * PER_THREAD; i++) {
        duplicates += all[i] == all[i - 1];
    }
    CHECK(duplicates == 0, "%zu duplicate IDs in %d", duplicates, THREADS * PER_THREAD);
    for (i = 0; i < (size_t)THREADS * PER_THREAD; i += 9973) {
        shardid_parts parts;
        CHECK_STATUS(shardid_decode(&layout, all[i], &parts), SHARDID_OK);
        CHECK(parts.shard == 17, "id %" PRIu64 " has shard %" PRIu64, all[i], parts.shard);
    }
    {
        /* Every ID counted, though none is counted one by one: both handles report the shard's. */
        shardid_stats a, b;
        CHECK_STATUS(shardid_generator_stats(first, &a), SHARDID_OK);
        CHECK_STATUS(shardid_generator_stats(second, &b), SHARDID_OK);
        CHECK(a.ids == (uint64_t)THREADS * PER_THREAD, "stats: %" PRIu64 " IDs, want %d", a.ids,
              THREADS * PER_THREAD);
        CHECK(b.ids == a.ids, "the second handle's stats: %" PRIu64 " IDs", b.ids);
    }
    printf("threads: %d threads, %d IDs, %zu duplicates\n", THREADS, THREADS * PER_THREAD, duplicates);
    shardid_generator_free(first);
    shardid_generator_free(second);
    free(all);
    return check_finish("threads");
}
