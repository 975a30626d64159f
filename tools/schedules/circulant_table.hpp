// The circulant-graph broadcast schedules of J. L. Träff, "Optimal Broadcast Schedules in
// Logarithmic Time with Applications to Broadcast, All-Broadcast, Reduction and
// All-Reduction", for root 0 and ranks first..last-1: in the layout of the paper's Table 1
// (rows: rank, baseblock, recv[0..q-1], send[0..q-1]; one column per rank) or as JSON.
// O(p log p) for all ranks, O(log p) for one. See docs/algorithms.md, "Circulant schedules".
#pragma once
#include <cstdint>
#include <string>

namespace ranklab::tools {

std::string circulant_table_json(std::int64_t p, std::int64_t first, std::int64_t last);
// Split into chunks of columns that fit in ~100 characters.
void print_circulant_table(std::int64_t p, std::int64_t first, std::int64_t last);

}  // namespace ranklab::tools
