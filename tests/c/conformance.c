/* Every conformance vector of tests/vectors/ (translated into vectors.h), through the C API. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vectors.h"

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static const shardid_layout *find_layout(const char *name) {
    size_t i;
    for (i = 0; i < COUNT(VECTOR_LAYOUTS); i++) {
        if (strcmp(VECTOR_LAYOUTS[i].name, name) == 0) {
            return &VECTOR_LAYOUTS[i].layout;
        }
    }
    fprintf(stderr, "unknown layout %s\n", name);
    abort();
}

static int same_layout(shardid_layout a, shardid_layout b) {
    return a.epoch_ms == b.epoch_ms && a.unit_ms == b.unit_ms && a.time_bits == b.time_bits &&
           a.shard_bits == b.shard_bits && a.sequence_bits == b.sequence_bits &&
           a.order == b.order && a.is_signed == b.is_signed;
}

static void test_version(void) {
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", SHARDID_VERSION_MAJOR, SHARDID_VERSION_MINOR,
             SHARDID_VERSION_PATCH);
    CHECK(strcmp(shardid_version(), expected) == 0, "library %s, header %s", shardid_version(),
          expected);
}

static void test_layouts(void) {
    size_t i;
    for (i = 0; i < COUNT(VECTOR_LAYOUTS); i++) {
        const struct vector_layout *v = &VECTOR_LAYOUTS[i];
        shardid_layout built;
        uint64_t value;
        CHECK_STATUS(shardid_layout_new(v->layout.epoch_ms, v->layout.unit_ms, v->layout.time_bits,
                                        v->layout.shard_bits, v->layout.sequence_bits,
                                        v->layout.order, v->layout.is_signed, &built),
                     SHARDID_OK);
        CHECK(same_layout(built, v->layout), "%s: shardid_layout_new changed the layout", v->name);
        CHECK_STATUS(shardid_max_shard(&v->layout, &value), SHARDID_OK);
        CHECK(value == v->max_shard, "%s max_shard %" PRIu64, v->name, value);
        CHECK_STATUS(shardid_max_sequence(&v->layout, &value), SHARDID_OK);
        CHECK(value == v->max_sequence, "%s max_sequence %" PRIu64, v->name, value);
        CHECK_STATUS(shardid_max_id(&v->layout, &value), SHARDID_OK);
        CHECK(value == v->max_id, "%s max_id %" PRIu64, v->name, value);
        CHECK_STATUS(shardid_expires_at_ms(&v->layout, &value), SHARDID_OK);
        CHECK(value == v->expires_at_ms, "%s expires_at_ms %" PRIu64, v->name, value);
    }
    /* The preset functions are the vectors' presets. */
    CHECK(same_layout(shardid_layout_instagram(), *find_layout("instagram")), "instagram preset");
    CHECK(same_layout(shardid_layout_twitter(), *find_layout("twitter")), "twitter preset");
    CHECK(same_layout(shardid_layout_discord(), *find_layout("discord")), "discord preset");
    CHECK(same_layout(shardid_layout_sonyflake(), *find_layout("sonyflake")), "sonyflake preset");
    /* Every layout the vectors mark as a preset has its name in the core's table; others not. */
    for (size_t i = 0; i < sizeof VECTOR_LAYOUTS / sizeof VECTOR_LAYOUTS[0]; i++) {
        const struct vector_layout *v = &VECTOR_LAYOUTS[i];
        shardid_layout preset = shardid_layout_twitter();
        shardid_status s = shardid_layout_preset(v->name, &preset);
        if (v->preset) {
            CHECK(s == SHARDID_OK && same_layout(preset, v->layout), "%s: shardid_layout_preset", v->name);
        } else {
            CHECK(s == SHARDID_ERR_INVALID_LAYOUT && same_layout(preset, shardid_layout_twitter()),
                  "%s is not a preset", v->name);
        }
    }
    CHECK(shardid_layout_preset(NULL, NULL) == SHARDID_ERR_NULL_ARGUMENT, "NULL name");
    CHECK(strcmp(shardid_last_error_message(), "a required pointer argument was NULL") == 0,
          "a null name's message: %s", shardid_last_error_message());
    /* An unknown name says so, with the names, in the core's words (Python's and JS's message). */
    {
        shardid_layout untouched = shardid_layout_twitter();
        const char *message;
        CHECK_STATUS(shardid_layout_preset("bogus", &untouched), SHARDID_ERR_INVALID_LAYOUT);
        message = shardid_last_error_message();
        CHECK(strstr(message, "no preset of that name") != NULL
                  && strstr(message, "INSTAGRAM, TWITTER, DISCORD or SONYFLAKE") != NULL,
              "an unknown preset's message: %s", message);
        CHECK(same_layout(untouched, shardid_layout_twitter()), "untouched after an unknown name");
        /* A call that succeeds leaves the message; the next failure replaces it with its own. */
        CHECK_STATUS(shardid_layout_preset("discord", &untouched), SHARDID_OK);
        CHECK(strstr(shardid_last_error_message(), "no preset of that name") != NULL,
              "kept after a success: %s", shardid_last_error_message());
        CHECK_STATUS(shardid_layout_preset("\xff", &untouched), SHARDID_ERR_INVALID_LAYOUT);
        CHECK(strstr(shardid_last_error_message(), "no preset of that name") != NULL,
              "a name that is not UTF-8: %s", shardid_last_error_message());
    }
    /* The details a status's name lacks, with the core's values. */
    {
        shardid_layout instagram = shardid_layout_instagram();
        shardid_generator *gen = NULL;
        CHECK_STATUS(shardid_generator_new(&instagram, 9000, &gen), SHARDID_ERR_SHARD_OUT_OF_RANGE);
        CHECK(strcmp(shardid_last_error_message(), "shard 9000 is out of range: the layout holds 0..=8191") == 0,
              "a shard out of range: %s", shardid_last_error_message());
        shardid_generator_free(gen);
    }

    for (i = 0; i < COUNT(VECTOR_INVALID_LAYOUTS); i++) {
        const struct vector_invalid_layout *v = &VECTOR_INVALID_LAYOUTS[i];
        shardid_layout untouched = shardid_layout_twitter();
        shardid_layout out = untouched;
        uint64_t value = 42;
        CHECK_STATUS(shardid_layout_new(v->layout.epoch_ms, v->layout.unit_ms, v->layout.time_bits,
                                        v->layout.shard_bits, v->layout.sequence_bits,
                                        v->layout.order, v->layout.is_signed, &out),
                     v->expect);
        CHECK(same_layout(out, untouched), "%s: output written on failure", v->name);
        /* A hand-filled invalid struct is rejected by every function that takes it. */
        CHECK_STATUS(shardid_max_id(&v->layout, &value), v->expect);
        CHECK(value == 42, "%s: output written on failure", v->name);
    }
}

static shardid_status run_case(const struct vector_case *c, uint64_t result[3]) {
    const shardid_layout *l = find_layout(c->layout);
    const char *op = c->op;
    if (strcmp(op, "decode") == 0) {
        shardid_parts parts;
        shardid_status s = shardid_decode(l, c->args[0], &parts);
        if (s == SHARDID_OK) {
            result[0] = parts.timestamp_ms;
            result[1] = parts.shard;
            result[2] = parts.sequence;
        }
        return s;
    }
    if (strcmp(op, "validate_id") == 0) return shardid_validate_id(l, c->args[0], result);
    if (strcmp(op, "compose") == 0) return shardid_compose(l, c->args[0], c->args[1], c->args[2], result);
    if (strcmp(op, "min_id_at") == 0) return shardid_min_id_at(l, c->args[0], result);
    if (strcmp(op, "max_id_at") == 0) return shardid_max_id_at(l, c->args[0], result);
    if (strcmp(op, "shard_for_key") == 0) return shardid_shard_for_key(l, c->args[0], c->args[1], result);
    if (strcmp(op, "scatter_decimal") == 0) return shardid_scatter_decimal(l, c->args[0], result);
    if (strcmp(op, "gather_decimal") == 0) return shardid_gather_decimal(l, c->args[0], result);
    if (strcmp(op, "scatter_bits") == 0) return shardid_scatter_bits(l, c->args[0], result);
    if (strcmp(op, "gather_bits") == 0) return shardid_gather_bits(l, c->args[0], result);
    if (strcmp(op, "scatter_decimal_digits") == 0) return shardid_scatter_decimal_digits(l, c->args[0], (uint32_t)c->args[1], result);
    if (strcmp(op, "gather_decimal_digits") == 0) return shardid_gather_decimal_digits(l, c->args[0], (uint32_t)c->args[1], result);
    fprintf(stderr, "unknown op %s\n", op);
    abort();
}

static void test_cases(void) {
    size_t i, k;
    for (i = 0; i < COUNT(VECTOR_CASES); i++) {
        const struct vector_case *c = &VECTOR_CASES[i];
        /* Sentinels: on failure nothing may be written. */
        uint64_t result[3] = {UINT64_C(0xDEAD), UINT64_C(0xDEAD), UINT64_C(0xDEAD)};
        size_t outputs = strcmp(c->op, "decode") == 0 ? 3 : 1;
        shardid_status s = run_case(c, result);
        CHECK(s == c->expect, "%s %s: got %s, want %s", c->file, c->name, shardid_status_str(s),
              shardid_status_str(c->expect));
        for (k = 0; k < outputs; k++) {
            uint64_t want = c->expect == SHARDID_OK ? c->result[k] : UINT64_C(0xDEAD);
            CHECK(result[k] == want, "%s %s: output %zu is %" PRIu64 ", want %" PRIu64, c->file,
                  c->name, k, result[k], want);
        }
    }
    CHECK(COUNT(VECTOR_CASES) > 200, "only %zu cases", COUNT(VECTOR_CASES));
}

/* The vectors assume a fresh state per trace. Generators made through the C API share one
 * state per (layout, shard) per process, so each trace runs in its own child process. */
static void run_trace(const struct vector_trace *t) {
    shardid_generator *gen = NULL;
    size_t i, k;
    CHECK_STATUS(shardid_generator_new_with_options(find_layout(t->layout), t->shard, &t->options, &gen),
                 SHARDID_OK);
    if (gen == NULL) return;
    for (i = 0; i < t->step_count; i++) {
        const struct vector_step *step = &VECTOR_STEPS[t->first_step + i];
        const uint64_t *want = &VECTOR_IDS[step->first_id];
        shardid_status s;
        if (step->count == 0) {
            uint64_t id = UINT64_C(0xDEAD);
            s = shardid_generator_next_at(gen, step->now_ms, &id);
            if (s == SHARDID_OK) {
                CHECK(step->id_count == 1 && id == want[0], "%s step %zu: id %" PRIu64, t->name, i, id);
            } else {
                CHECK(id == UINT64_C(0xDEAD), "%s step %zu: output written on failure", t->name, i);
            }
        } else {
            uint64_t ids[64];
            size_t written = 9999;
            if (step->count > COUNT(ids)) abort();
            s = shardid_generator_next_batch_at(gen, step->now_ms, ids, (size_t)step->count, &written);
            if (s == SHARDID_OK) {
                CHECK(written == step->id_count, "%s step %zu: wrote %zu, want %zu", t->name, i,
                      written, step->id_count);
                for (k = 0; k < written && k < step->id_count; k++) {
                    CHECK(ids[k] == want[k], "%s step %zu: id %zu is %" PRIu64, t->name, i, k, ids[k]);
                }
            } else {
                CHECK(written == 9999, "%s step %zu: count written on failure", t->name, i);
            }
        }
        CHECK(s == step->expect, "%s step %zu: got %s, want %s", t->name, i, shardid_status_str(s),
              shardid_status_str(step->expect));
    }
    shardid_generator_free(gen);
}

#include <sys/wait.h>
#include <unistd.h>

static void test_traces(void) {
    size_t i;
    for (i = 0; i < COUNT(VECTOR_TRACES); i++) {
        pid_t pid;
        int status = 0;
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            check_passed = 0;
            check_failed = 0;
            run_trace(&VECTOR_TRACES[i]);
            _exit(check_failed > 0 || check_passed == 0 ? 1 : 0);
        }
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "trace %s failed (see above)", VECTOR_TRACES[i].name);
    }
}

/* Every error kind of the core's table has its status, named the same (errors.json). */
static void test_error_kinds(void) {
    size_t n = sizeof VECTOR_ERROR_KINDS / sizeof VECTOR_ERROR_KINDS[0];
    CHECK(n >= 18, "only %zu error kinds", n);
    for (size_t i = 0; i < n; i++) {
        const struct vector_error_kind *k = &VECTOR_ERROR_KINDS[i];
        const char *text = shardid_status_str(k->number);
        CHECK(strncmp(text, k->prefix, strlen(k->prefix)) == 0, "status %u is \"%s\", want %s...",
              (unsigned)k->number, text, k->prefix);
    }
    CHECK(strncmp(shardid_status_str(SHARDID_ERR_INVALID_ARGUMENT), "SHARDID_ERR_INVALID_ARGUMENT: ", 30) == 0,
          "the header names the core's kinds");
}

/* Builds the public IDs of a vector's spec; the status. */
static shardid_status public_ids_of(const struct vector_public_spec *s, shardid_public_ids **out) {
    shardid_status status;
    size_t i;
    *out = NULL;
    status = shardid_public_ids_new((const uint8_t *)s->key, s->key_len, s->key_version, s->prefix,
                                    s->encoding, find_layout(s->layout), out);
    for (i = 0; status == SHARDID_OK && i < s->old_key_count; i++) {
        const struct vector_public_key *k = &s->old_keys[i];
        status = shardid_public_ids_add_old_key(*out, k->key_version, (const uint8_t *)k->key,
                                                k->key_len);
    }
    if (status != SHARDID_OK) {
        shardid_public_ids_free(*out);
        *out = NULL;
    }
    return status;
}

/* Public IDs: every case of public_ids.json gives the same text, ID or status as the core. */
static void test_public_ids(void) {
    size_t i, n = COUNT(VECTOR_PUBLIC_CASES);
    CHECK(n > 400, "only %zu public ID cases", n);
    for (i = 0; i < n; i++) {
        const struct vector_public_case *v = &VECTOR_PUBLIC_CASES[i];
        shardid_public_ids *ids = NULL;
        char *text = NULL;
        size_t text_len = v->text_len * v->repeat, r;
        uint64_t id = UINT64_C(0x5EAF00D);
        uint32_t version = 12345;
        if (strcmp(v->op, "encode") != 0) {
            text = malloc(text_len + 1);
            for (r = 0; r < v->repeat; r++) memcpy(text + r * v->text_len, v->text, v->text_len);
        }
        if (strcmp(v->op, "check") == 0) {
            shardid_status got =
                shardid_public_check(v->ids.prefix, v->ids.encoding, text, text_len, &version);
            CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
            CHECK(got != SHARDID_OK || version == v->id, "%s: version %u", v->name, version);
            CHECK(got == SHARDID_OK || version == 12345, "%s: written on an error", v->name);
            free(text);
            continue;
        }
        CHECK_STATUS(public_ids_of(&v->ids, &ids), SHARDID_OK);
        if (ids == NULL) {
            free(text);
            continue;
        }
        if (strcmp(v->op, "encode") == 0) {
            char buf[SHARDID_PUBLIC_ID_MAX_LEN];
            size_t len = 999;
            shardid_status got = shardid_public_encode(ids, v->id, buf, sizeof buf, &len);
            CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
            if (got == SHARDID_OK) {
                CHECK(len == v->text_len && memcmp(buf, v->text, len) == 0 && buf[len] == 0,
                      "%s: \"%s\"", v->name, buf);
                /* A buffer one byte short (no room for the NUL) is refused, untouched. */
                len = 999;
                CHECK_STATUS(shardid_public_encode(ids, v->id, buf, v->text_len, &len),
                             SHARDID_ERR_INVALID_ARGUMENT);
                CHECK(len == 999, "%s: written on an error", v->name);
            } else {
                CHECK(len == 999, "%s: written on an error", v->name);
            }
        } else {
            shardid_status got = shardid_public_decode(ids, text, text_len, &id);
            CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
            CHECK(got == SHARDID_OK ? id == v->id : id == UINT64_C(0x5EAF00D), "%s: id %" PRIu64,
                  v->name, id);
        }
        shardid_public_ids_free(ids);
        free(text);
    }
    for (i = 0; i < COUNT(VECTOR_PUBLIC_KEYS_TEXT); i++) {
        const struct vector_public_keys_text *v = &VECTOR_PUBLIC_KEYS_TEXT[i];
        shardid_public_ids *ids = NULL;
        char buf[SHARDID_PUBLIC_ID_MAX_LEN];
        size_t len = 0;
        shardid_status got = shardid_public_ids_from_keys(v->keys, v->prefix, v->encoding,
                                                          find_layout("instagram"), &ids);
        CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
        if (got == SHARDID_OK) {
            CHECK_STATUS(shardid_public_encode(ids, v->id, buf, sizeof buf, &len), SHARDID_OK);
            CHECK(strcmp(buf, v->text) == 0, "%s: %s", v->name, buf);
        } else {
            CHECK(ids == NULL, "%s: made", v->name);
        }
        shardid_public_ids_free(ids);
    }
    for (i = 0; i < COUNT(VECTOR_PUBLIC_INVALID); i++) {
        const struct vector_public_invalid *v = &VECTOR_PUBLIC_INVALID[i];
        shardid_public_ids *ids = NULL;
        shardid_status got = public_ids_of(&v->ids, &ids);
        CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
        CHECK(ids == NULL, "%s: made", v->name);
    }
}

/* The counters equal what a scripted clock made happen (a shard no other test uses: the
 * figures are the process's for a layout and shard). Sonyflake: 256 IDs per 10 ms unit. */
static void test_stats(void) {
    shardid_layout layout = shardid_layout_sonyflake();
    shardid_options options = shardid_options_default();
    shardid_generator *gen = NULL;
    shardid_stats stats;
    uint64_t ids[64], id;
    size_t written, i;
    const uint64_t t = UINT64_C(1700000000000);
    options.max_borrow_units = 1;
    CHECK_STATUS(shardid_generator_new_with_options(&layout, 4242, &options, &gen), SHARDID_OK);
    if (gen == NULL) return;
    memset(&stats, 0xFF, sizeof stats);
    CHECK_STATUS(shardid_generator_stats(gen, &stats), SHARDID_OK);
    CHECK(stats.ids == 0 && stats.waits == 0 && stats.borrowed_units == 0, "fresh: %" PRIu64, stats.ids);
    /* Five batches of 64 at one time: the fifth runs into the next unit, borrowed. */
    for (i = 0; i < 5; i++) {
        CHECK_STATUS(shardid_generator_next_batch_at(gen, t, ids, 64, &written), SHARDID_OK);
    }
    /* An ID 100 ms later, then one 50 ms behind it: continued from the last unit. */
    CHECK_STATUS(shardid_generator_next_at(gen, t + 100, &id), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_at(gen, t + 50, &id), SHARDID_OK);
    /* 5 s behind: refused. */
    CHECK_STATUS(shardid_generator_next_at(gen, t - 5000, &id), SHARDID_ERR_CLOCK_MOVED_BACKWARDS);
    CHECK_STATUS(shardid_generator_stats(gen, &stats), SHARDID_OK);
    CHECK(stats.ids == 322, "ids %" PRIu64 ", want 322", stats.ids);
    CHECK(stats.borrowed_units == 1, "borrowed_units %" PRIu64 ", want 1", stats.borrowed_units);
    CHECK(stats.clock_backwards == 1, "clock_backwards %" PRIu64 ", want 1", stats.clock_backwards);
    CHECK(stats.clock_backwards_refused == 1, "clock_backwards_refused %" PRIu64,
          stats.clock_backwards_refused);
    CHECK(stats.waits == 0, "waits %" PRIu64 ": the _at calls never wait", stats.waits);
    CHECK_STATUS(shardid_generator_stats(gen, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_stats(NULL, &stats), SHARDID_ERR_NULL_ARGUMENT);
    shardid_generator_free(gen);
}

/* The UUIDv7 bridge: every case of uuid.json through shardid_to_uuid + shardid_uuid_format
 * and shardid_uuid_parse + shardid_from_uuid; nothing written on an error. */
static void test_uuids(void) {
    size_t i, n = COUNT(VECTOR_UUID_CASES);
    CHECK(n > 80, "only %zu UUID cases", n);
    for (i = 0; i < n; i++) {
        const struct vector_uuid_case *v = &VECTOR_UUID_CASES[i];
        const shardid_layout *layout = v->layout ? find_layout(v->layout) : NULL;
        uint8_t uuid[16];
        char text[SHARDID_UUID_TEXT_LEN];
        uint64_t id = UINT64_C(0x5EAF00D);
        shardid_status got;
        memset(uuid, 0x5A, sizeof uuid);
        if (strcmp(v->op, "to_uuid") == 0) {
            got = shardid_to_uuid(layout, v->id, uuid);
            CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
            if (got != SHARDID_OK) {
                CHECK(uuid[0] == 0x5A && uuid[15] == 0x5A, "%s: written on an error", v->name);
                continue;
            }
            CHECK_STATUS(shardid_uuid_format(uuid, text), SHARDID_OK);
            CHECK(strcmp(text, v->text) == 0, "%s: \"%s\", want \"%s\"", v->name, text, v->text);
            continue;
        }
        got = shardid_uuid_parse(v->text, strlen(v->text), uuid);
        if (got == SHARDID_OK) got = shardid_from_uuid(layout, uuid, &id);
        CHECK(got == v->expect, "%s: %s", v->name, shardid_status_str(got));
        CHECK(got == SHARDID_OK ? id == v->id : id == UINT64_C(0x5EAF00D), "%s: id %" PRIu64,
              v->name, id);
    }
    /* NULL where 16 bytes or a buffer belong; a layout NULL only means "the marker's". */
    {
        shardid_layout l = shardid_layout_twitter();
        uint8_t uuid[16];
        char text[SHARDID_UUID_TEXT_LEN];
        uint64_t id = 0;
        CHECK_STATUS(shardid_to_uuid(NULL, 5, uuid), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_to_uuid(&l, 5, NULL), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_to_uuid(&l, 5, uuid), SHARDID_OK);
        CHECK_STATUS(shardid_from_uuid(&l, NULL, &id), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_from_uuid(&l, uuid, NULL), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_uuid_format(NULL, text), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_uuid_format(uuid, NULL), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_uuid_parse(NULL, 36, uuid), SHARDID_ERR_NULL_ARGUMENT);
        CHECK_STATUS(shardid_from_uuid(NULL, uuid, &id), SHARDID_OK);
        CHECK(id == 5, "id %" PRIu64, id);
        /* The reason is the core's, in shardid_last_error_message(). */
        uuid[6] = (uint8_t)((uuid[6] & 0x0F) | 0x40);
        CHECK_STATUS(shardid_from_uuid(NULL, uuid, &id), SHARDID_ERR_INVALID_ARGUMENT);
        CHECK(strstr(shardid_last_error_message(), "not a UUIDv7") != NULL, "%s",
              shardid_last_error_message());
    }
}

/* A shard from a StatefulSet pod's ordinal: every case of ordinal.json through
 * shardid_shard_from_ordinal; nothing written on an error; NULL's hostname is HOSTNAME's. */
static void test_ordinals(void) {
    size_t i, n = COUNT(VECTOR_ORDINAL_CASES);
    shardid_layout l = shardid_layout_instagram();
    uint64_t shard = UINT64_C(0x5EAF00D);
    const char *saved = getenv("HOSTNAME");
    char *saved_copy = saved ? strdup(saved) : NULL;
    CHECK(n > 20, "only %zu ordinal cases", n);
    for (i = 0; i < n; i++) {
        const struct vector_ordinal_case *v = &VECTOR_ORDINAL_CASES[i];
        shardid_status got;
        shard = UINT64_C(0x5EAF00D);
        got = shardid_shard_from_ordinal(find_layout(v->layout), v->first, v->end, v->hostname, &shard);
        CHECK(got == v->expect, "%s: %s (%s)", v->name, shardid_status_str(got), shardid_last_error_message());
        CHECK(got == SHARDID_OK ? shard == v->shard : shard == UINT64_C(0x5EAF00D), "%s: shard %" PRIu64,
              v->name, shard);
    }
    /* The reason is the core's: it names the argument and the shape expected. */
    CHECK_STATUS(shardid_shard_from_ordinal(&l, 0, 8192, "app", &shard), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK(strstr(shardid_last_error_message(), "hostname has no StatefulSet ordinal: expected <statefulset>-<ordinal>") != NULL,
          "%s", shardid_last_error_message());
    CHECK_STATUS(shardid_shard_from_ordinal(&l, 0, 8192, "app-\377", &shard), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK(strstr(shardid_last_error_message(), "hostname is not UTF-8") != NULL, "%s", shardid_last_error_message());
    CHECK_STATUS(shardid_shard_from_ordinal(NULL, 0, 8192, "app-3", &shard), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_shard_from_ordinal(&l, 0, 8192, "app-3", NULL), SHARDID_ERR_NULL_ARGUMENT);
    /* NULL: the HOSTNAME environment variable, read at the call. */
    setenv("HOSTNAME", "web-42", 1);
    CHECK_STATUS(shardid_shard_from_ordinal(&l, 0, 8192, NULL, &shard), SHARDID_OK);
    CHECK(shard == 42, "shard %" PRIu64, shard);
    setenv("HOSTNAME", "web-042", 1);
    CHECK_STATUS(shardid_shard_from_ordinal(&l, 0, 8192, NULL, &shard), SHARDID_ERR_INVALID_ARGUMENT);
    if (saved_copy) {
        setenv("HOSTNAME", saved_copy, 1);
        free(saved_copy);
    } else {
        unsetenv("HOSTNAME");
    }
}

int main(void) {
    test_version();
    test_error_kinds();
    test_layouts();
    test_cases();
    test_traces();
    test_public_ids();
    test_uuids();
    test_ordinals();
    test_stats();
    return check_finish("conformance");
}
