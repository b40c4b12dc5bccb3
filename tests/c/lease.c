/* Shard leases through the C ABI: distinct shards, SHARDID_ERR_NO_FREE_SHARD, a forked child
 * taking a shard of its own, a child killed with SIGKILL and its successor, and a clock set
 * back between holders. */
#define _DEFAULT_SOURCE /* mkdtemp, fork, kill */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define T0 UINT64_C(1700000000000)

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void new_dir(char *buf) {
    strcpy(buf, "/tmp/shardid-c-lease-XXXXXX");
    if (mkdtemp(buf) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
}

static void remove_dir(const char *dir) {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static shardid_lease *take(const char *dir, uint64_t first, uint64_t end) {
    shardid_layout twitter = shardid_layout_twitter();
    shardid_lease *lease = NULL;
    CHECK_STATUS(shardid_lease_new(&twitter, dir, first, end, NULL, &lease), SHARDID_OK);
    return lease;
}

/* Reads exactly n bytes (or fewer at end of file); returns how many. */
static size_t read_all(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

static void distinct_shards_and_no_free_shard(void) {
    char dir[64];
    shardid_layout twitter = shardid_layout_twitter();
    shardid_lease *a, *b, *c = NULL;
    uint64_t sa = 0, sb = 0, sc = 0;
    new_dir(dir);
    a = take(dir, 3, 5);
    b = take(dir, 3, 5);
    CHECK_STATUS(shardid_lease_shard(a, &sa), SHARDID_OK);
    CHECK_STATUS(shardid_lease_shard(b, &sb), SHARDID_OK);
    CHECK(sa == 3 && sb == 4, "shards %" PRIu64 ", %" PRIu64, sa, sb);
    CHECK_STATUS(shardid_lease_new(&twitter, dir, 3, 5, NULL, &c), SHARDID_ERR_NO_FREE_SHARD);
    CHECK(c == NULL, "the output is written only on success");
    CHECK_STATUS(shardid_lease_new(&twitter, dir, 1020, 1030, NULL, &c), SHARDID_ERR_SHARD_OUT_OF_RANGE);
    CHECK_STATUS(shardid_lease_new(&twitter, NULL, 0, 1, NULL, &c), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_lease_next(NULL, &sc), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_lease_next(a, NULL), SHARDID_ERR_NULL_ARGUMENT);
    {
        /* A length no array has: a status, nothing written (bad_input.c has the generator's). */
        uint64_t few[2] = {7, 7};
        CHECK_STATUS(shardid_lease_next_batch(a, few, SIZE_MAX), SHARDID_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(shardid_lease_next_batch(a, few, SIZE_MAX / 8 + 1), SHARDID_ERR_INVALID_ARGUMENT);
        CHECK(few[0] == 7 && few[1] == 7, "written by a failed call");
    }
    CHECK(strncmp(shardid_status_str(SHARDID_ERR_NO_FREE_SHARD), "SHARDID_ERR_NO_FREE_SHARD:", 26) == 0, "status string");
    CHECK(strncmp(shardid_status_str(SHARDID_ERR_LEASE_FILE), "SHARDID_ERR_LEASE_FILE:", 23) == 0, "status string");
    shardid_lease_free(a);
    c = take(dir, 3, 5);
    CHECK_STATUS(shardid_lease_shard(c, &sc), SHARDID_OK);
    CHECK(sc == 3, "a freed shard is taken again: %" PRIu64, sc);
    shardid_lease_free(b);
    shardid_lease_free(c);
    shardid_lease_free(NULL);
    remove_dir(dir);
}

#define CHILDREN 3
#define PER_CHILD 20000

static void forked_children_take_their_own_shards(void) {
    char dir[64];
    uint64_t *all = malloc(sizeof(uint64_t) * PER_CHILD * (CHILDREN + 1));
    uint64_t shards[CHILDREN + 1];
    size_t n = 0, i, k;
    int fds[CHILDREN][2];
    pid_t pids[CHILDREN];
    shardid_lease *lease;
    new_dir(dir);
    lease = take(dir, 0, 8);
    CHECK_STATUS(shardid_lease_shard(lease, &shards[0]), SHARDID_OK);
    for (k = 0; k < CHILDREN; k++) {
        if (pipe(fds[k]) != 0) exit(2);
        pids[k] = fork();
        if (pids[k] == 0) {
            uint64_t shard = 0, id;
            close(fds[k][0]);
            if (shardid_lease_shard(lease, &shard) != SHARDID_OK) _exit(3);
            for (i = 0; i < PER_CHILD; i++) {
                if (shardid_lease_next(lease, &id) != SHARDID_OK) _exit(4);
                if (write(fds[k][1], &id, sizeof id) != sizeof id) _exit(5);
            }
            if (write(fds[k][1], &shard, sizeof shard) != sizeof shard) _exit(5);
            _exit(0);
        }
        close(fds[k][1]);
    }
    CHECK_STATUS(shardid_lease_next_batch(lease, all, PER_CHILD), SHARDID_OK);
    n = PER_CHILD;
    for (k = 0; k < CHILDREN; k++) {
        int status = 0;
        size_t got = read_all(fds[k][0], all + n, sizeof(uint64_t) * PER_CHILD);
        CHECK(got == sizeof(uint64_t) * PER_CHILD, "child %zu wrote %zu bytes", k, got);
        CHECK(read_all(fds[k][0], &shards[k + 1], sizeof(uint64_t)) == sizeof(uint64_t), "child shard");
        n += PER_CHILD;
        close(fds[k][0]);
        waitpid(pids[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %zu exit status %d", k, status);
    }
    qsort(shards, CHILDREN + 1, sizeof(uint64_t), cmp_u64);
    for (k = 1; k <= CHILDREN; k++) CHECK(shards[k] != shards[k - 1], "two processes hold shard %" PRIu64, shards[k]);
    qsort(all, n, sizeof(uint64_t), cmp_u64);
    for (i = 1; i < n; i++) {
        if (all[i] == all[i - 1]) {
            CHECK(0, "duplicate ID %" PRIu64, all[i]);
            break;
        }
    }
    shardid_lease_free(lease);
    free(all);
    remove_dir(dir);
}

static void a_killed_holders_successor_continues_above_it(void) {
    char dir[64];
    uint64_t ids[1000], next = 0, max = 0;
    size_t i;
    int fds[2], status = 0;
    pid_t pid;
    shardid_lease *successor;
    shardid_layout twitter = shardid_layout_twitter();
    shardid_lease *none = NULL;
    new_dir(dir);
    if (pipe(fds) != 0) exit(2);
    pid = fork();
    if (pid == 0) {
        shardid_lease *lease = NULL;
        uint64_t id;
        close(fds[0]);
        if (shardid_lease_new(&twitter, dir, 0, 1, NULL, &lease) != SHARDID_OK) _exit(3);
        for (;;) {
            if (shardid_lease_next(lease, &id) != SHARDID_OK) _exit(4);
            if (write(fds[1], &id, sizeof id) != sizeof id) _exit(0);
        }
    }
    close(fds[1]);
    CHECK(read_all(fds[0], ids, sizeof ids) == sizeof ids, "the holder wrote IDs");
    CHECK_STATUS(shardid_lease_new(&twitter, dir, 0, 1, NULL, &none), SHARDID_ERR_NO_FREE_SHARD);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fds[0]);
    for (i = 0; i < 1000; i++) max = ids[i] > max ? ids[i] : max;
    successor = take(dir, 0, 1);
    CHECK_STATUS(shardid_lease_next(successor, &next), SHARDID_OK);
    CHECK(next > max, "successor %" PRIu64 " not above the killed holder's %" PRIu64, next, max);
    shardid_lease_free(successor);
    remove_dir(dir);
}

static void a_clock_set_back_between_holders(void) {
    char dir[64];
    uint64_t id = 0, last = 0, later = 0;
    int i;
    shardid_lease *lease;
    new_dir(dir);
    lease = take(dir, 0, 1);
    for (i = 0; i < 1000; i++) CHECK_STATUS(shardid_lease_next_at(lease, T0 + (uint64_t)(i / 100), &last), SHARDID_OK);
    shardid_lease_free(lease);
    lease = take(dir, 0, 1);
    CHECK_STATUS(shardid_lease_next_at(lease, T0 - 5000, &id), SHARDID_ERR_CLOCK_MOVED_BACKWARDS);
    CHECK_STATUS(shardid_lease_next_at(lease, T0 - 400, &id), SHARDID_ERR_SEQUENCE_EXHAUSTED);
    CHECK_STATUS(shardid_lease_next_at(lease, T0 + 200, &later), SHARDID_OK);
    CHECK(later > last, "after a clock set back: %" PRIu64 " <= %" PRIu64, later, last);
    shardid_lease_free(lease);
    remove_dir(dir);
}

int main(void) {
    distinct_shards_and_no_free_shard();
    forked_children_take_their_own_shards();
    a_killed_holders_successor_continues_above_it();
    a_clock_set_back_between_holders();
    return check_finish("lease");
}
