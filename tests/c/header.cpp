// The header compiles as C++ (g++ -std=c++11 -Wall -Werror) and links against libshardid.
#include "shardid.h"

#include <cstdio>

int main() {
    shardid_layout layout = shardid_layout_discord();
    shardid_generator *gen = nullptr;
    if (shardid_generator_new(&layout, 1, &gen) != SHARDID_OK) {
        std::puts(shardid_status_str(SHARDID_ERR_PANIC));
        return 1;
    }
    uint64_t id = 0;
    shardid_parts parts{};
    shardid_status status = shardid_generator_next(gen, &id);
    if (status == SHARDID_OK) {
        status = shardid_decode(&layout, id, &parts);
    }
    shardid_generator_free(gen);
    std::printf("header.cpp: %s, id %llu shard %llu\n", shardid_status_str(status),
                static_cast<unsigned long long>(id), static_cast<unsigned long long>(parts.shard));
    return status == SHARDID_OK && parts.shard == 1 ? 0 : 1;
}
