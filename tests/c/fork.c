/* fork() and the C API: a generator made before fork() refuses in the child
 * (SHARDID_ERR_FORKED_GENERATOR from every function that issues IDs, nothing written), where
 * it would hand out the parent's IDs again; one made in the child works there and refuses in
 * a grandchild; the parent goes on. (A lease used in a child takes a shard of its own there:
 * tests/c/lease.c.) */
#define _DEFAULT_SOURCE /* fork */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define T0 UINT64_C(1700000000000)
#define N 1000

/* What a child reports through its pipe: the status of each call and every ID it wrote. */
typedef struct {
    shardid_status next, next_at, batch, batch_at, own;
    size_t written;
    uint64_t ids[N];
} report;

static void write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) _exit(3);
        p += w;
        n -= (size_t)w;
    }
}

static size_t read_all(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

/* In a child: every ID-issuing call of `gen`, with what it wrote kept in `out`. */
static void use_in_child(const shardid_generator *gen, report *out) {
    uint64_t id = 0, batch[N];
    size_t written = 0, i;
    memset(batch, 0, sizeof batch);
    out->next = shardid_generator_next(gen, &id);
    if (id != 0) out->ids[out->written++] = id;
    id = 0;
    out->next_at = shardid_generator_next_at(gen, shardid_now_ms() + 5, &id);
    if (id != 0) out->ids[out->written++] = id;
    out->batch = shardid_generator_next_batch(gen, batch, N / 2);
    for (i = 0; i < N / 2 && out->written < N; i++)
        if (batch[i] != 0) out->ids[out->written++] = batch[i];
    memset(batch, 0, sizeof batch);
    out->batch_at = shardid_generator_next_batch_at(gen, shardid_now_ms() + 10, batch, N / 4, &written);
    for (i = 0; i < written && out->written < N; i++) out->ids[out->written++] = batch[i];
}

static int waited_ok(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The parent's generator in a child: refused by every call, nothing handed out; the parent's
 * IDs after the fork are its own. */
static void a_generator_made_before_fork_refuses_in_the_child(void) {
    shardid_layout twitter = shardid_layout_twitter();
    shardid_generator *gen = NULL;
    uint64_t before[N], after[N];
    report child;
    int fds[2];
    pid_t pid;
    size_t i, j;

    CHECK_STATUS(shardid_generator_new(&twitter, 7, &gen), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_batch(gen, before, N), SHARDID_OK);
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    pid = fork();
    if (pid == 0) {
        report r;
        shardid_generator *own = NULL;
        uint64_t id = 0;
        memset(&r, 0, sizeof r);
        close(fds[0]);
        use_in_child(gen, &r);
        /* A generator made in the child (another shard) works there. */
        r.own = shardid_generator_new(&twitter, 8, &own);
        if (r.own == SHARDID_OK) r.own = shardid_generator_next(own, &id);
        write_all(fds[1], &r, sizeof r);
        shardid_generator_free(own);
        _exit(0);
    }
    close(fds[1]);
    CHECK(pid > 0, "fork failed");
    CHECK_STATUS(shardid_generator_next_batch(gen, after, N), SHARDID_OK);
    memset(&child, 0, sizeof child);
    CHECK(read_all(fds[0], &child, sizeof child) == sizeof child, "the child's report");
    close(fds[0]);
    CHECK(waited_ok(pid), "the child exited with an error");

    CHECK_STATUS(child.next, SHARDID_ERR_FORKED_GENERATOR);
    CHECK_STATUS(child.next_at, SHARDID_ERR_FORKED_GENERATOR);
    CHECK_STATUS(child.batch, SHARDID_ERR_FORKED_GENERATOR);
    CHECK_STATUS(child.batch_at, SHARDID_ERR_FORKED_GENERATOR);
    CHECK_STATUS(child.own, SHARDID_OK);
    CHECK(child.written == 0, "the child handed out %zu of the parent's IDs", child.written);
    /* The parent's IDs after the fork are above those before it, and none of the child's. */
    CHECK(after[0] > before[N - 1], "the parent went on above its IDs");
    for (i = 0; i < child.written && i < N; i++)
        for (j = 0; j < N; j++)
            if (child.ids[i] == after[j] || child.ids[i] == before[j]) {
                CHECK(0, "ID %" PRIu64 " handed out by parent and child", child.ids[i]);
                j = N;
            }
    shardid_generator_free(gen);
}

/* A generator made in a child works there, and refuses in that child's own child. */
static void a_generator_made_in_a_child_refuses_in_a_grandchild(void) {
    shardid_layout twitter = shardid_layout_twitter();
    pid_t pid = fork();
    if (pid == 0) {
        shardid_generator *gen = NULL;
        uint64_t id = 0;
        int ok = shardid_generator_new(&twitter, 9, &gen) == SHARDID_OK &&
                 shardid_generator_next(gen, &id) == SHARDID_OK && id != 0;
        pid_t grandchild = fork();
        if (grandchild == 0) {
            uint64_t again = 0;
            shardid_status s = shardid_generator_next(gen, &again);
            _exit(s == SHARDID_ERR_FORKED_GENERATOR && again == 0 ? 0 : 1);
        }
        ok = ok && grandchild > 0 && waited_ok(grandchild);
        ok = ok && shardid_generator_next(gen, &id) == SHARDID_OK;
        shardid_generator_free(gen);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0 && waited_ok(pid), "a child's generator, or its refusal in a grandchild");
}

int main(void) {
    a_generator_made_before_fork_refuses_in_the_child();
    a_generator_made_in_a_child_refuses_in_a_grandchild();
    return check_finish("fork");
}
