// The completion calls, while served nonblocking collectives are in flight (nonblocking.cpp):
// a wait is a loop of "advance; PMPI_Test...", a test one pass of it. They also report the
// errors of failed served calls whose requests they complete (take_failure). With neither,
// straight to PMPI.
#include <vector>

#include "progress.hpp"

using namespace ranklab::mpi::interpose;

namespace {

bool plain() { return !active() && !failures_pending(); }

// A single request that completed (rc MPI_SUCCESS): a failed served call's error instead.
int report(MPI_Request before, int rc, MPI_Status* status) {
  if (rc != MPI_SUCCESS) return rc;
  const int code = take_failure(before);
  if (code == MPI_SUCCESS) return rc;
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
  return code;
}

// `n` requests that completed, the k-th at before[which ? which[k] : k], its status at
// statuses[k]: MPI_ERR_IN_STATUS if any was a failed served call.
int report_all(const std::vector<MPI_Request>& before, int rc, int n, const int* which, MPI_Status* statuses) {
  if (rc != MPI_SUCCESS || n == MPI_UNDEFINED) return rc;
  // The statuses change only if one failed: from the first failed one on as they are taken,
  // the ones before it afterwards.
  int first = -1;
  for (int k = 0; k < n; ++k) {
    const int code = take_failure(before[which ? which[k] : k]);
    if (code != MPI_SUCCESS && first < 0) first = k;
    if (first >= 0 && statuses != MPI_STATUSES_IGNORE) statuses[k].MPI_ERROR = code;
  }
  if (first < 0) return rc;
  if (statuses != MPI_STATUSES_IGNORE)
    for (int k = 0; k < first; ++k) statuses[k].MPI_ERROR = MPI_SUCCESS;
  return MPI_ERR_IN_STATUS;
}

std::vector<MPI_Request> handles(const MPI_Request* requests, int count) {
  return std::vector<MPI_Request>(requests, requests + (count > 0 ? count : 0));
}

}  // namespace

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (plain()) return PMPI_Wait(request, status);
  const MPI_Request before = *request;
  return report(before, active() ? wait_native(request, status) : PMPI_Wait(request, status), status);
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (plain()) return PMPI_Waitall(count, requests, statuses);
  const auto before = handles(requests, count);
  const int rc = active() ? test_until([&](int* done) { return PMPI_Testall(count, requests, done, statuses); })
                          : PMPI_Waitall(count, requests, statuses);
  return report_all(before, rc, count, nullptr, statuses);
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (plain()) return PMPI_Waitany(count, requests, index, status);
  const auto before = handles(requests, count);
  const int rc = active() ? test_until([&](int* done) { return PMPI_Testany(count, requests, index, done, status); })
                          : PMPI_Waitany(count, requests, index, status);
  return *index == MPI_UNDEFINED ? rc : report(before[*index], rc, status);
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (plain()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  const auto before = handles(requests, incount);
  const int rc = active() ? test_until([&](int* done) {
    const int code = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *done = *outcount != 0;  // MPI_UNDEFINED when no request is active
    return code;
  })
                          : PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  return report_all(before, rc, *outcount, indices, statuses);
}

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (plain()) return PMPI_Test(request, flag, status);
  const MPI_Request before = *request;
  step();
  const int rc = PMPI_Test(request, flag, status);
  return *flag ? report(before, rc, status) : rc;
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (plain()) return PMPI_Testall(count, requests, flag, statuses);
  step();
  // Only a failed served call's request needs the handles as they were.
  if (!failures_pending()) return PMPI_Testall(count, requests, flag, statuses);
  const auto before = handles(requests, count);
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  return *flag ? report_all(before, rc, count, nullptr, statuses) : rc;
}

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (plain()) return PMPI_Testany(count, requests, index, flag, status);
  step();
  if (!failures_pending()) return PMPI_Testany(count, requests, index, flag, status);
  const auto before = handles(requests, count);
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  return *flag && *index != MPI_UNDEFINED ? report(before[*index], rc, status) : rc;
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (plain()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  step();
  if (!failures_pending()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const auto before = handles(requests, incount);
  return report_all(before, PMPI_Testsome(incount, requests, outcount, indices, statuses), *outcount, indices,
                    statuses);
}

extern "C" int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (active()) step();
  return PMPI_Request_get_status(request, flag, status);
}
