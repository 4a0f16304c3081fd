// Every public header, compiled with -I include only, as C++20: none
// reaches into src/ or needs what clang 14 with libstdc++ 12 lacks.

#include "pathwarden/acl.h"
#include "pathwarden/cred.h"
#include "pathwarden/decision.h"
#include "pathwarden/errno.h"
#include "pathwarden/executor.h"
#include "pathwarden/export.h"
#include "pathwarden/handles.h"
#include "pathwarden/kernel_rules.h"
#include "pathwarden/landlock.h"
#include "pathwarden/model.h"
#include "pathwarden/pathwarden.h"
#include "pathwarden/request.h"
#include "pathwarden/result.h"
#include "pathwarden/ruleset.h"
#include "pathwarden/scenario.h"
#include "pathwarden/sysctls.h"
#include "pathwarden/tree.h"
#include "pathwarden/uapi.h"

#include <gtest/gtest.h>

TEST(PublicHeaders, CompileAlone) { SUCCEED(); }
