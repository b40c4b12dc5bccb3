/* The clock's ticker thread and Valgrind: a burst of IDs starts the library's background clock
 * thread ("shardid-clock"), which is still running when this program returns; a child forked
 * while it runs makes IDs of its own and exits too. tests/c/run.sh runs this under
 * `valgrind --leak-check=full --error-exitcode=99` with the suppression file libshardid
 * installs (share/shardid/valgrind/shardid.supp), ten times: every run must pass; and (with
 * -fsanitize=address) with LSAN_OPTIONS=suppressions= its LeakSanitizer file
 * (share/shardid/lsan/shardid.supp), whose leak check reports the parent's thread in the child. */
#define _DEFAULT_SOURCE /* fork, usleep */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
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

/* Waits (at most 2 s) until a thread of this process other than the main one sleeps in
 * nanosleep: the ticker's loop, past its start. A fork while it starts can copy a lock of
 * AddressSanitizer's allocator held by it (GCC 12's runtime does not take them around fork),
 * which the child's leak check then waits for forever; a real program forks later. Where the
 * kernel hides wchan this just times out and forks, as before. */
static void wait_for_the_ticker_to_sleep(void) {
    char path[300], wchan[64];
    int tries;
    for (tries = 0; tries < 2000; tries++) {
        DIR *tasks = opendir("/proc/self/task");
        struct dirent *task;
        int asleep = 0;
        if (tasks == NULL) return;
        while (!asleep && (task = readdir(tasks)) != NULL) {
            FILE *f;
            if (task->d_name[0] == '.' || atoi(task->d_name) == (int)getpid()) continue;
            snprintf(path, sizeof path, "/proc/self/task/%s/wchan", task->d_name);
            if ((f = fopen(path, "r")) == NULL) continue;
            if (fgets(wchan, sizeof wchan, f) != NULL && strstr(wchan, "nanosleep") != NULL) asleep = 1;
            fclose(f);
        }
        closedir(tasks);
        if (asleep) return;
        usleep(1000);
    }
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
    wait_for_the_ticker_to_sleep();

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
