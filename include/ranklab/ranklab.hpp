// The whole public interface of ranklab: every header of include/ranklab/ (the MPI
// backend's ranklab/mpi.hpp, installed with it, needs <mpi.h> and is included on its own).
#pragma once
#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/circulant.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/data_flow.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/explore.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/request.hpp"
#include "ranklab/schedule.hpp"
#include "ranklab/selection.hpp"
#include "ranklab/team.hpp"
