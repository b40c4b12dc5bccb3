/* The clock's ticker thread and Valgrind: a burst of IDs starts the library's background clock
 * thread ("shardid-clock"), which is still running when this program returns; a child forked
 * while it runs makes IDs of its own and exits too. tests/c/run.sh runs this under
 * `valgrind --leak-check=full --error-exitcode=99` with the suppression file libshardid
 * installs (share/shardid/valgrind/shardid.supp), ten times: every run must pass. */
#define _DEFAULT_SOURCE /* fork */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define BURST 2000

/* A burst in one millisecond or a few: the generator starts the ticker. */
static uint64_t burst(shardid_generator *gen) {
    uint64_t ids[BURST], last = 0;
    size_t i;
    for (i = 0; i < BURST; i++) {
        if (shardid_generator_next(gen, &ids[i]) != SHARDID_OK) exit(2);
        if (ids[i] <= last) exit(3);
        last = ids[i];
    }
    return last;
}

int main(void) {
    shardid_layout layout = shardid_layout_instagram();
    shardid_generator *gen = NULL, *child_gen = NULL;
    shardid_stats stats;
    pid_t pid;
    int status = 0;

    CHECK_STATUS(shardid_generator_new(&layout, 1, &gen), SHARDID_OK);
    if (gen == NULL) return check_finish("clock thread");
    burst(gen);
    CHECK_STATUS(shardid_generator_stats(gen, &stats), SHARDID_OK);
    /* The thread this test is about runs. */
    CHECK(stats.ticker_starts >= 1, "no ticker started: %" PRIu64, stats.ticker_starts);

    pid = fork();
    CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
        /* The child: the parent's ticker did not come along; a burst here starts its own. */
        if (shardid_generator_new(&layout, 2, &child_gen) != SHARDID_OK) _exit(4);
        burst(child_gen);
        shardid_generator_free(child_gen);
        shardid_generator_free(gen);
        exit(0); /* exit, not _exit: Valgrind's leak check runs at the child's exit too */
    }
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status: %d", status);
    burst(gen);
    shardid_generator_free(gen);
    return check_finish("clock thread"); /* the ticker is still running here */
}
