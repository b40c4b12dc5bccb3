/* Bad input of every kind: each call returns its status, writes nothing, and nothing crashes.
 * Run under valgrind (memcheck) and the sanitizers by tests/c/run.sh. */
#include <string.h>

#include "check.h"
#include "vectors.h"

#define SENTINEL UINT64_C(0x5EAF00D)

static void test_null_pointers(void) {
    shardid_layout l = shardid_layout_twitter();
    shardid_options o = shardid_options_default();
    shardid_generator *gen = NULL;
    shardid_parts parts;
    uint64_t id = SENTINEL, ids[4];
    size_t written = 7;

    CHECK_STATUS(shardid_layout_new(0, 1, 41, 10, 12, SHARDID_ORDER_TIME_SHARD_SEQUENCE, true, NULL),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_decode(NULL, 1, &parts), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_decode(&l, 1, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_compose(NULL, 0, 0, 0, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_compose(&l, l.epoch_ms, 0, 0, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_min_id_at(NULL, l.epoch_ms, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_max_id_at(&l, l.epoch_ms, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_max_id(NULL, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_expires_at_ms(&l, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_shard_for_key(NULL, 1, 2, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_scatter_bits(&l, 1, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK(id == SENTINEL, "an output was written by a failed call");

    CHECK_STATUS(shardid_generator_new(NULL, 1, &gen), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_new(&l, 1, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_new_with_options(&l, 1, NULL, &gen), SHARDID_ERR_NULL_ARGUMENT);
    CHECK(gen == NULL, "a generator was made by a failed call");

    CHECK_STATUS(shardid_generator_next(NULL, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_at(NULL, l.epoch_ms, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_batch(NULL, ids, 4), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_batch_at(NULL, l.epoch_ms, ids, 4, &written),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_layout(NULL, &l), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_shard(NULL, &id), SHARDID_ERR_NULL_ARGUMENT);

    CHECK_STATUS(shardid_generator_new_with_options(&l, 1, &o, &gen), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next(gen, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_at(gen, l.epoch_ms + 5, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_batch(gen, NULL, 4), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_batch_at(gen, l.epoch_ms + 5, NULL, 4, &written),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_generator_next_batch_at(gen, l.epoch_ms + 5, ids, 4, NULL),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK(written == 7, "a count was written by a failed call");
    CHECK(id == SENTINEL, "an output was written by a failed call");
    /* An empty batch needs no array. */
    CHECK_STATUS(shardid_generator_next_batch(gen, NULL, 0), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_batch_at(gen, l.epoch_ms + 5, NULL, 0, &written), SHARDID_OK);
    CHECK(written == 0, "empty batch wrote %zu", written);
    /* A NULL output made no ID disappear: the first ID at this time is still sequence 0. */
    CHECK_STATUS(shardid_generator_next_at(gen, l.epoch_ms + 5, &id), SHARDID_OK);
    CHECK(id == ((UINT64_C(5) << 22) | (UINT64_C(1) << 12)), "first id after NULL outputs: %" PRIu64, id);
    shardid_generator_free(gen);
    shardid_generator_free(NULL);
}

static void test_invalid_layouts(void) {
    shardid_layout bad = shardid_layout_instagram();
    shardid_generator *gen = NULL;
    uint64_t id = SENTINEL;
    shardid_parts parts;

    bad.order = 7; /* not a shardid_field_order */
    CHECK_STATUS(shardid_decode(&bad, 1, &parts), SHARDID_ERR_INVALID_LAYOUT);
    CHECK_STATUS(shardid_generator_new(&bad, 1, &gen), SHARDID_ERR_INVALID_LAYOUT);
    bad = shardid_layout_instagram();
    bad.time_bits = 60; /* 60 + 13 + 10 > 63 */
    CHECK_STATUS(shardid_compose(&bad, bad.epoch_ms, 0, 0, &id), SHARDID_ERR_INVALID_LAYOUT);
    CHECK_STATUS(shardid_generator_new(&bad, 1, &gen), SHARDID_ERR_INVALID_LAYOUT);
    bad = shardid_layout_instagram();
    bad.unit_ms = 0;
    CHECK_STATUS(shardid_min_id_at(&bad, bad.epoch_ms, &id), SHARDID_ERR_INVALID_LAYOUT);
    CHECK_STATUS(shardid_layout_new(0, 1, 0, 10, 10, 0, true, &bad), SHARDID_ERR_INVALID_LAYOUT);
    CHECK_STATUS(shardid_layout_new(0, 1, 41, 10, 12, 2, true, &bad), SHARDID_ERR_INVALID_LAYOUT);
    CHECK(gen == NULL && id == SENTINEL, "output written by a failed call");
}

static void test_out_of_range(void) {
    shardid_layout l = shardid_layout_instagram();
    shardid_generator *gen = NULL;
    uint64_t id = SENTINEL, max_id = 0;
    shardid_parts parts;

    CHECK_STATUS(shardid_generator_new(&l, 8192, &gen), SHARDID_ERR_SHARD_OUT_OF_RANGE);
    CHECK_STATUS(shardid_generator_new(&l, UINT64_MAX, &gen), SHARDID_ERR_SHARD_OUT_OF_RANGE);
    CHECK(gen == NULL, "a generator was made for an out-of-range shard");
    CHECK_STATUS(shardid_compose(&l, l.epoch_ms, 8192, 0, &id), SHARDID_ERR_SHARD_OUT_OF_RANGE);
    CHECK_STATUS(shardid_compose(&l, l.epoch_ms, 0, 1024, &id), SHARDID_ERR_SEQUENCE_OUT_OF_RANGE);
    CHECK_STATUS(shardid_compose(&l, l.epoch_ms - 1, 0, 0, &id), SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH);
    CHECK_STATUS(shardid_compose(&l, UINT64_MAX, 0, 0, &id), SHARDID_ERR_TIMESTAMP_PAST_EXPIRY);
    CHECK_STATUS(shardid_shard_for_key(&l, 5, 0, &id), SHARDID_ERR_INVALID_SHARD_COUNT);
    CHECK_STATUS(shardid_shard_for_key(&l, 5, 8193, &id), SHARDID_ERR_INVALID_SHARD_COUNT);
    /* IDs that are not valid for the layout: the sign bit of a signed layout, bits above a
     * narrow layout's width. Never decoded as something else. */
    CHECK_STATUS(shardid_decode(&l, UINT64_C(1) << 63, &parts), SHARDID_ERR_INVALID_ID);
    CHECK_STATUS(shardid_decode(&l, UINT64_MAX, &parts), SHARDID_ERR_INVALID_ID);
    CHECK_STATUS(shardid_validate_id(&l, UINT64_MAX, &id), SHARDID_ERR_INVALID_ID);
    CHECK_STATUS(shardid_layout_new(0, 1, 8, 2, 2, 0, true, &l), SHARDID_OK);
    CHECK_STATUS(shardid_max_id(&l, &max_id), SHARDID_OK);
    CHECK_STATUS(shardid_decode(&l, max_id + 1, &parts), SHARDID_ERR_INVALID_ID);
    CHECK_STATUS(shardid_scatter_bits(&l, max_id + 1, &id), SHARDID_ERR_INVALID_ID);
    CHECK(id == SENTINEL, "output written by a failed call");
}

static void test_generator_errors(void) {
    shardid_layout tiny;
    shardid_generator *gen = NULL;
    uint64_t id = SENTINEL, ids[8], expires = 0;
    size_t written = 0;
    int i;

    /* 8 time bits, 2 shard bits, 2 sequence bits from epoch 1000: 4 IDs per ms, 256 ms. */
    CHECK_STATUS(shardid_layout_new(1000, 1, 8, 2, 2, 0, true, &tiny), SHARDID_OK);
    CHECK_STATUS(shardid_expires_at_ms(&tiny, &expires), SHARDID_OK);
    CHECK_STATUS(shardid_generator_new(&tiny, 3, &gen), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_at(gen, 999, &id), SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH);
    for (i = 0; i < 4; i++) {
        CHECK_STATUS(shardid_generator_next_at(gen, 1100, &id), SHARDID_OK);
    }
    CHECK_STATUS(shardid_generator_next_at(gen, 1100, &id), SHARDID_ERR_SEQUENCE_EXHAUSTED);
    CHECK_STATUS(shardid_generator_next_batch_at(gen, 1100, ids, 8, &written),
                 SHARDID_ERR_SEQUENCE_EXHAUSTED);
    CHECK_STATUS(shardid_generator_next_at(gen, 1100 - 1001, &id), SHARDID_ERR_TIMESTAMP_BEFORE_EPOCH);
    CHECK_STATUS(shardid_generator_next_at(gen, expires + 1, &id), SHARDID_ERR_TIMESTAMP_PAST_EXPIRY);
    /* The generator now reads the real clock, long past this layout's expiry. */
    CHECK_STATUS(shardid_generator_next(gen, &id), SHARDID_ERR_TIMESTAMP_PAST_EXPIRY);
    CHECK_STATUS(shardid_generator_next_batch(gen, ids, 8), SHARDID_ERR_TIMESTAMP_PAST_EXPIRY);
    shardid_generator_free(gen);

    /* A clock far behind the last issued ID: the error, not a repeated ID. */
    CHECK_STATUS(shardid_layout_new(1000, 1, 41, 10, 12, 0, true, &tiny), SHARDID_OK);
    CHECK_STATUS(shardid_generator_new(&tiny, 1, &gen), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_at(gen, 10000, &id), SHARDID_OK);
    CHECK_STATUS(shardid_generator_next_at(gen, 10000 - 1001, &id), SHARDID_ERR_CLOCK_MOVED_BACKWARDS);
    shardid_generator_free(gen);
}

/* The accessors and helpers, on good input. */
static void test_accessors(void) {
    shardid_layout l = shardid_layout_sonyflake(), got;
    shardid_options o = shardid_options_default();
    shardid_generator *gen = NULL;
    uint64_t shard = 0, id = 0, same = 0, before, after;

    CHECK(o.backwards_tolerance_ms == 1000 && o.max_borrow_units == 0, "default options");
    CHECK_STATUS(shardid_generator_new(&l, 4242, &gen), SHARDID_OK);
    CHECK_STATUS(shardid_generator_layout(gen, &got), SHARDID_OK);
    CHECK(got.epoch_ms == l.epoch_ms && got.unit_ms == 10 && got.order == SHARDID_ORDER_TIME_SEQUENCE_SHARD,
          "generator layout");
    CHECK_STATUS(shardid_generator_shard(gen, &shard), SHARDID_OK);
    CHECK(shard == 4242, "generator shard %" PRIu64, shard);
    before = shardid_now_ms();
    CHECK_STATUS(shardid_generator_next(gen, &id), SHARDID_OK);
    after = shardid_now_ms();
    CHECK(after >= before && before > UINT64_C(1700000000000), "now_ms %" PRIu64 " .. %" PRIu64, before, after);
    CHECK_STATUS(shardid_validate_id(&l, id, &same), SHARDID_OK);
    CHECK(same == id, "validate_id returns the ID");
    shardid_generator_free(gen);
}

/* Public IDs: NULL pointers, bad arguments and short buffers are statuses, nothing written. */
static void test_public_ids(void) {
    static const uint8_t key[16] = "0123456789abcdef";
    shardid_layout l = shardid_layout_instagram();
    shardid_public_ids *ids = NULL;
    char buf[SHARDID_PUBLIC_ID_MAX_LEN];
    size_t len = 7;
    uint64_t id = SENTINEL;
    uint32_t version = 7;

    CHECK_STATUS(shardid_public_ids_new(NULL, 16, 0, "note", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, NULL, SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", SHARDID_ENCODING_BASE32, NULL, &ids),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", SHARDID_ENCODING_BASE32, &l, NULL),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 15, 0, "note", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 32, "note", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "Note", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "n\xc3\xb6te", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "n\xffte", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", 4, &l, &ids), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", 255, &l, &ids), SHARDID_ERR_INVALID_ARGUMENT);
    l.time_bits = 0;
    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", SHARDID_ENCODING_BASE32, &l, &ids),
                 SHARDID_ERR_INVALID_LAYOUT);
    CHECK(ids == NULL, "public IDs were made by a failed call");
    l = shardid_layout_instagram();

    CHECK_STATUS(shardid_public_ids_new(key, 16, 0, "note", SHARDID_ENCODING_BASE58, &l, &ids),
                 SHARDID_OK);
    CHECK_STATUS(shardid_public_ids_add_old_key(NULL, 1, key, 16), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_add_old_key(ids, 1, NULL, 16), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_add_old_key(ids, 0, key, 16), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_ids_add_old_key(ids, 1, key, 0), SHARDID_ERR_INVALID_ARGUMENT);

    CHECK_STATUS(shardid_public_encode(NULL, 5, buf, sizeof buf, &len), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_encode(ids, 5, NULL, sizeof buf, &len), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_encode(ids, 5, buf, sizeof buf, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_encode(ids, 5, buf, 0, &len), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_encode(ids, 5, buf, 17, &len), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_encode(ids, UINT64_MAX, buf, sizeof buf, &len), SHARDID_ERR_INVALID_ID);
    CHECK(len == 7, "a length was written by a failed call");
    CHECK_STATUS(shardid_public_encode(ids, 5, buf, 18, &len), SHARDID_OK);
    CHECK(len == 17 && strlen(buf) == 17, "text %s", buf);

    CHECK_STATUS(shardid_public_decode(NULL, buf, len, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_decode(ids, NULL, len, &id), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_decode(ids, buf, len, NULL), SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_decode(ids, NULL, 0, &id), SHARDID_ERR_PUBLIC_ID_PREFIX);
    CHECK_STATUS(shardid_public_decode(ids, buf, len - 1, &id), SHARDID_ERR_PUBLIC_ID_LENGTH);
    CHECK_STATUS(shardid_public_decode(ids, "note_\0\0\0\0\0\0\0\0\0\0\0\0", 17, &id),
                 SHARDID_ERR_PUBLIC_ID_ALPHABET);
    CHECK_STATUS(shardid_public_decode(ids, "note_\xff\xfe\x80", 8, &id), SHARDID_ERR_PUBLIC_ID_ALPHABET);
    CHECK(id == SENTINEL, "an ID was written by a failed call");
    CHECK_STATUS(shardid_public_decode(ids, buf, len, &id), SHARDID_OK);
    CHECK(id == 5, "decoded %" PRIu64, id);

    CHECK_STATUS(shardid_public_check(NULL, SHARDID_ENCODING_BASE58, buf, len, &version),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_check("note", SHARDID_ENCODING_BASE58, buf, len, NULL),
                 SHARDID_ERR_NULL_ARGUMENT);
    CHECK_STATUS(shardid_public_check("note", 9, buf, len, &version), SHARDID_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(shardid_public_check("user", SHARDID_ENCODING_BASE58, buf, len, &version),
                 SHARDID_ERR_PUBLIC_ID_PREFIX);
    CHECK(version == 7, "a version was written by a failed call");
    CHECK_STATUS(shardid_public_check("note", SHARDID_ENCODING_BASE58, buf, len, &version), SHARDID_OK);
    CHECK(version == 0, "version %u", (unsigned)version);

    shardid_public_ids_free(ids);
    shardid_public_ids_free(NULL);
}

/* Lengths no buffer has (SIZE_MAX, above PTRDIFF_MAX bytes, past the end of memory) are
 * SHARDID_ERR_INVALID_ARGUMENT before anything is read or written (they were a panic that
 * aborts in a debug build, undefined behaviour in a release one); the cases are
 * adversarial.json's "c_lengths", walked by length_case(). */
static shardid_status length_case(const char *call, int wraps, size_t huge) {
    static const uint8_t key[16] = "0123456789abcdef";
    shardid_layout l = shardid_layout_twitter();
    shardid_generator *gen = NULL;
    shardid_public_ids *ids = NULL;
    shardid_public_ids *made = NULL;
    shardid_serial_format *format = NULL;
    uint64_t array[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL}, id = SENTINEL;
    /* The last 8-byte slot of the address space: any length of 2 or more wraps past its end. */
    uint64_t *end = (uint64_t *)(UINTPTR_MAX & ~(uintptr_t)7);
    uint64_t *ptr = wraps ? end : array;
    char text[SHARDID_PUBLIC_ID_MAX_LEN] = "note_1";
    char *text_ptr = wraps ? (char *)(UINTPTR_MAX - 1) : text;
    size_t written = 7, len = 7;
    uint32_t version = 7;
    shardid_status s = SHARDID_ERR_PANIC;

    if (shardid_generator_new(&l, 1, &gen) != SHARDID_OK ||
        shardid_public_ids_new(key, 16, 0, "note", SHARDID_ENCODING_BASE58, &l, &ids) != SHARDID_OK ||
        shardid_serial_format_new("S-{seq:6}", "UTC", &format) != SHARDID_OK)
        return SHARDID_ERR_PANIC;
    if (strcmp(call, "shardid_generator_next_batch") == 0) {
        s = shardid_generator_next_batch(gen, ptr, huge);
    } else if (strcmp(call, "shardid_generator_next_batch_at") == 0) {
        s = shardid_generator_next_batch_at(gen, shardid_now_ms(), ptr, huge, &written);
        CHECK(written == 7, "%s: a count was written by a failed call", call);
    } else if (strcmp(call, "shardid_public_ids_new") == 0) {
        s = shardid_public_ids_new(wraps ? (const uint8_t *)text_ptr : key, huge, 0, "note",
                                   SHARDID_ENCODING_BASE58, &l, &made);
        CHECK(made == NULL, "%s: public IDs were made by a failed call", call);
    } else if (strcmp(call, "shardid_public_ids_add_old_key") == 0) {
        s = shardid_public_ids_add_old_key(ids, 1, wraps ? (const uint8_t *)text_ptr : key, huge);
    } else if (strcmp(call, "shardid_public_encode") == 0) {
        s = shardid_public_encode(ids, 5, text_ptr, huge, &len);
        CHECK(len == 7, "%s: a length was written by a failed call", call);
    } else if (strcmp(call, "shardid_public_decode") == 0) {
        s = shardid_public_decode(ids, text_ptr, huge, &id);
    } else if (strcmp(call, "shardid_public_check") == 0) {
        s = shardid_public_check("note", SHARDID_ENCODING_BASE58, text_ptr, huge, &version);
        CHECK(version == 7, "%s: a version was written by a failed call", call);
    } else if (strcmp(call, "shardid_serial_render") == 0) {
        s = shardid_serial_render(format, 5, UINT64_C(1700000000000), text_ptr, huge, &len);
        CHECK(len == 7, "%s: a length was written by a failed call", call);
    } else if (strcmp(call, "shardid_uuid_parse") == 0) {
        uint8_t uuid[16];
        memset(uuid, 0x5A, sizeof uuid);
        s = shardid_uuid_parse(text_ptr, huge, uuid);
        CHECK(uuid[0] == 0x5A && uuid[15] == 0x5A, "%s: a UUID was written by a failed call", call);
    } else {
        CHECK(0, "no such call in length_case: %s", call);
    }
    CHECK(id == SENTINEL && array[0] == SENTINEL && array[3] == SENTINEL,
          "%s: output written by a failed call", call);
    shardid_serial_format_free(format);
    shardid_public_ids_free(made);
    shardid_public_ids_free(ids);
    shardid_generator_free(gen);
    return s;
}

static void test_hostile_lengths(void) {
    size_t i;
    for (i = 0; i < sizeof VECTOR_C_LENGTHS / sizeof VECTOR_C_LENGTHS[0]; i++) {
        const struct vector_c_length *c = &VECTOR_C_LENGTHS[i];
        shardid_status got = length_case(c->call, c->wraps, c->length);
        CHECK(got == c->expect, "%s (%s): got %s, want %s", c->name, c->call, shardid_status_str(got),
              shardid_status_str(c->expect));
    }
}

/* A layout's is_signed is a C bool: a byte other than 0 or 1 written there by hand (memcpy,
 * memset, a struct from elsewhere) is SHARDID_ERR_INVALID_LAYOUT, read without undefined
 * behaviour; the cases are adversarial.json's "c_bools". */
static void test_hostile_bools(void) {
    size_t i;
    for (i = 0; i < sizeof VECTOR_C_BOOLS / sizeof VECTOR_C_BOOLS[0]; i++) {
        const struct vector_c_bool *c = &VECTOR_C_BOOLS[i];
        shardid_layout l = shardid_layout_twitter();
        shardid_generator *gen = NULL;
        shardid_parts parts;
        uint64_t id = SENTINEL;
        memcpy(&l.is_signed, &c->byte, 1);
        CHECK_STATUS(shardid_decode(&l, 1, &parts), c->expect);
        CHECK_STATUS(shardid_max_id(&l, &id), c->expect);
        CHECK_STATUS(shardid_generator_new(&l, 1, &gen), c->expect);
        CHECK((c->expect == SHARDID_OK) == (gen != NULL), "%s: a generator made or not", c->name);
        shardid_generator_free(gen);
    }
}

static void test_status_strings(void) {
    uint32_t s;
    for (s = 0; s <= 200; s++) {
        const char *text = shardid_status_str(s);
        CHECK(text != NULL && strncmp(text, "SHARDID_", 8) == 0, "status %u: %s", (unsigned)s,
              text ? text : "(null)");
    }
    CHECK(strncmp(shardid_status_str(SHARDID_ERR_INVALID_ID), "SHARDID_ERR_INVALID_ID:", 23) == 0,
          "%s", shardid_status_str(SHARDID_ERR_INVALID_ID));
    CHECK(strncmp(shardid_status_str(12345), "SHARDID_ERR_UNKNOWN", 19) == 0, "%s",
          shardid_status_str(12345));
}

int main(void) {
    test_null_pointers();
    test_public_ids();
    test_invalid_layouts();
    test_out_of_range();
    test_generator_errors();
    test_accessors();
    test_hostile_lengths();
    test_hostile_bools();
    test_status_strings();
    return check_finish("bad_input");
}
