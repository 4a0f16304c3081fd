// An open-addressing hash table of 32-bit ids, readable without locks while
// one writer inserts and erases: the model's dentry hash (keyed by parent and
// name, like the kernel's d_hash) and mount hash (keyed by parent mount and
// mountpoint, like m_hash).

#ifndef PATHWARDEN_SRC_BASE_ID_HASH_H_
#define PATHWARDEN_SRC_BASE_ID_HASH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace pathwarden::internal {

// MixHash()
//
// Combines a parent id and a name hash into a table hash.
inline uint32_t MixHash(uint32_t parent, uint32_t hash) noexcept {
  uint64_t x = (static_cast<uint64_t>(parent) << 32) | hash;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// SaltHash()
//
// Combines an id with a hash that is already well mixed (a name's): one
// multiply, where MixHash() mixes two raw ids.
inline uint32_t SaltHash(uint32_t salt, uint32_t hash) noexcept {
  return hash ^ (salt * 0x9e3779b1u);
}

// IdHashTable
//
// Each slot holds (hash << 32 | id); 0 is empty, so ids are never 0. The
// table stores no keys: Find() asks the caller whether an id with a matching
// hash is the one sought. Linear probing with backward-shift deletion; the
// table grows to keep the load factor at most 3/4.
//
// A reader racing the writer may miss an entry or see one twice; it must
// validate its result with the world's SeqCount, as every write bumps it.
// Tables replaced by a resize are kept until destruction, so a reader still
// probing one never touches freed memory (their total is at most the size of
// the current table).
class IdHashTable {
 public:
  IdHashTable() { Publish(MakeTable(64)); }
  IdHashTable(const IdHashTable&) = delete;
  IdHashTable& operator=(const IdHashTable&) = delete;

  // View
  //
  // The current table, for a reader that probes it many times (a path
  // walk): its slots and mask in registers, where the table's own fields
  // would be reloaded after every acquire load. A table replaced by a
  // resize stays readable until the hash table is destroyed, so a view
  // never dangles; what it finds is validated like any read.
  class View {
   public:
    // Find()
    //
    // The first id stored with `hash` for which match(id) is true, or 0.
    template <typename Match>
    [[gnu::always_inline]]
    uint32_t Find(uint32_t hash, Match&& match) const noexcept {
      for (uint32_t i = hash & mask_, n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
        const uint64_t s = slots_[i].load(std::memory_order_acquire);
        if (s == 0) return 0;
        if (static_cast<uint32_t>(s >> 32) == hash && match(static_cast<uint32_t>(s)))
          return static_cast<uint32_t>(s);
      }
      return 0;
    }

   private:
    friend class IdHashTable;
    View(const std::atomic<uint64_t>* slots, uint32_t mask) : slots_(slots), mask_(mask) {}

    const std::atomic<uint64_t>* slots_;
    uint32_t mask_;
  };

  View view() const noexcept {
    const Table* t = table_.load(std::memory_order_acquire);
    return View(t->slots.get(), t->mask);
  }

  // Find()
  //
  // View::Find() on the current table.
  template <typename Match>
  uint32_t Find(uint32_t hash, Match&& match) const noexcept {
    return view().Find(hash, std::forward<Match>(match));
  }

  // Insert()
  //
  // Writer only. `id` must not be present already.
  void Insert(uint32_t hash, uint32_t id) {
    Table* t = table_.load(std::memory_order_relaxed);
    if ((count_ + 1) * 4 > (t->mask + 1) * 3) t = Grow(t);
    Place(t, (static_cast<uint64_t>(hash) << 32) | id);
    ++count_;
  }

  // Erase()
  //
  // Writer only. Removes (hash, id) if present.
  void Erase(uint32_t hash, uint32_t id) {
    Table* t = table_.load(std::memory_order_relaxed);
    uint32_t mask = t->mask;
    uint64_t want = (static_cast<uint64_t>(hash) << 32) | id;
    uint32_t i = hash & mask;
    for (;; i = (i + 1) & mask) {
      uint64_t s = t->slots[i].load(std::memory_order_relaxed);
      if (s == 0) return;
      if (s == want) break;
    }
    // Backward shift: move later entries of the cluster into the hole when
    // their home slot is not between the hole and their position.
    uint32_t j = i;
    for (;;) {
      j = (j + 1) & mask;
      uint64_t s = t->slots[j].load(std::memory_order_relaxed);
      if (s == 0) break;
      uint32_t home = static_cast<uint32_t>(s >> 32) & mask;
      bool movable = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        t->slots[i].store(s, std::memory_order_release);
        i = j;
      }
    }
    t->slots[i].store(0, std::memory_order_release);
    --count_;
  }

  uint32_t size() const noexcept { return count_; }
  size_t bytes() const noexcept {
    size_t b = 0;
    for (const auto& t : tables_) b += (t->mask + 1) * sizeof(uint64_t);
    return b;
  }
  size_t live_bytes() const noexcept {
    return (table_.load()->mask + 1) * sizeof(uint64_t);
  }

 private:
  struct Table {
    uint32_t mask;
    std::unique_ptr<std::atomic<uint64_t>[]> slots;
  };

  static std::unique_ptr<Table> MakeTable(uint32_t capacity) {
    auto t = std::make_unique<Table>();
    t->mask = capacity - 1;
    t->slots.reset(new std::atomic<uint64_t>[capacity]);
    for (uint32_t i = 0; i < capacity; ++i)
      t->slots[i].store(0, std::memory_order_relaxed);
    return t;
  }

  static void Place(Table* t, uint64_t entry) {
    uint32_t mask = t->mask;
    for (uint32_t i = static_cast<uint32_t>(entry >> 32) & mask;;
         i = (i + 1) & mask) {
      if (t->slots[i].load(std::memory_order_relaxed) == 0) {
        t->slots[i].store(entry, std::memory_order_release);
        return;
      }
    }
  }

  Table* Grow(Table* old) {
    auto t = MakeTable((old->mask + 1) * 2);
    for (uint32_t i = 0; i <= old->mask; ++i) {
      uint64_t s = old->slots[i].load(std::memory_order_relaxed);
      if (s != 0) Place(t.get(), s);
    }
    Table* raw = t.get();
    Publish(std::move(t));
    return raw;
  }

  void Publish(std::unique_ptr<Table> t) {
    table_.store(t.get(), std::memory_order_release);
    tables_.push_back(std::move(t));
  }

  std::atomic<Table*> table_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;
  uint32_t count_ = 0;
};

}  // namespace pathwarden::internal

#endif  // PATHWARDEN_SRC_BASE_ID_HASH_H_
