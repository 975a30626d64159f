// The whole public interface of ranklab.
#pragma once
#include "ranklab/call.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/collectives.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/data_flow.hpp"
#include "ranklab/datatype.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/request.hpp"
#include "ranklab/schedule.hpp"
#include "ranklab/team.hpp"
