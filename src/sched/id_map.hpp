// IdMap: job id -> uint32_t value, open addressing with linear probing. preempt/idletime notes
// every running job once per candidate search (thousands per owner at 2,000 running jobs) and
// slurmctld asks for each candidate's rank about 2 log2(n) times while it sorts them: a
// node-based set allocated and freed one node per job per search, and the rank was a binary
// search. Here clear() is O(1) (a generation stamp) and the table only grows, so a search
// allocates nothing once the table has reached the largest batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace idletime::sched {

class IdMap {
public:
    IdMap() = default;
    // Starts at generation `gen` (tests: a wrap of the stamp after a few clears).
    explicit IdMap(uint32_t gen) : gen_(gen ? gen : 1) {}
    void clear() {
        size_ = 0;
        if (++gen_ != 0) return;
        for (Slot &s : slots_) s.gen = 0;  // the stamp wrapped: forget every slot
        gen_ = 1;
    }
    size_t size() const { return size_; }
    bool contains(uint32_t id) const { return find(id) != nullptr; }
    // The value of `id`, or nullptr when absent.
    const uint32_t *find(uint32_t id) const {
        if (slots_.empty()) return nullptr;
        const Slot &s = slots_[probe(slots_, id)];
        return s.gen == gen_ ? &s.value : nullptr;
    }
    // Sets the value of `id` (inserted when absent). May throw std::bad_alloc (table growth).
    void put(uint32_t id, uint32_t value) {
        if (!slots_.empty()) {
            Slot &s = slots_[probe(slots_, id)];
            if (s.gen == gen_) {  // present: never grows
                s.value = value;
                return;
            }
        }
        if ((size_ + 1) * 2 > slots_.size()) grow();
        slots_[probe(slots_, id)] = Slot{id, value, gen_};
        ++size_;
    }

private:
    struct Slot {
        uint32_t id = 0, value = 0, gen = 0;
    };
    // The slot holding `id` in this generation, or the empty one where it would go.
    size_t probe(const std::vector<Slot> &t, uint32_t id) const {
        const size_t mask = t.size() - 1;
        size_t i = (uint64_t(id) * 0x9E3779B97F4A7C15ull >> 32) & mask;
        while (t[i].gen == gen_ && t[i].id != id) i = (i + 1) & mask;
        return i;
    }
    void grow() {
        std::vector<Slot> bigger(slots_.empty() ? 64 : slots_.size() * 2);
        for (const Slot &s : slots_)
            if (s.gen == gen_) bigger[probe(bigger, s.id)] = s;
        slots_.swap(bigger);
    }
    std::vector<Slot> slots_;  // size 0 or a power of two, at most half full
    uint32_t gen_ = 1;         // slots stamped with another generation are empty
    size_t size_ = 0;
};

}  // namespace idletime::sched
