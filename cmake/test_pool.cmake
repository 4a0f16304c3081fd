# One ctest over several build trees (./test): the pool's
# CTestTestfile.cmake, written by ./test, sets the trees and includes
# this file:
#
#   set(PW_POOL_TREES "release=/abs/build" "asan=/abs/build-asan")
#   include("/abs/cmake/test_pool.cmake")
#
# Each tree's tests are declared as its own CTestTestfile.cmake declares
# them, with their names prefixed by the tree's ("asan:hostile.inputs"),
# so that one `ctest -j` schedules all of them on the machine's cores and
# their RESOURCE_LOCKs (the host's lock) and RUN_SERIAL hold across the
# trees. A test without a WORKING_DIRECTORY runs in the build directory
# that declares it, as in its own tree. Every argument is passed on alone,
# in bracket quotes: one holding a `;`, or empty, stays as written.

# pw_pool_quote(OUT VALUE): VALUE as one bracket argument.
function(pw_pool_quote out value)
  set(${out} "[==========[${value}]==========]" PARENT_SCOPE)
endfunction()

function(add_test)
  pw_pool_quote(name "${PW_POOL_PREFIX}${ARGV0}")
  set(code "_add_test(${name}")
  math(EXPR last "${ARGC} - 1")
  if(last GREATER_EQUAL 1)
    foreach(i RANGE 1 ${last})
      pw_pool_quote(arg "${ARGV${i}}")
      string(APPEND code " ${arg}")
    endforeach()
  endif()
  cmake_language(EVAL CODE "${code})")
  cmake_language(EVAL CODE
    "_set_tests_properties(${name} PROPERTIES WORKING_DIRECTORY [==========[${PW_POOL_DIR}]==========])")
endfunction()

# The order: ctest starts the costliest test first (its COST; ./test
# removes the pool's timings of earlier runs, which would replace the
# COSTs). A test on the host's lock costs 100,000 more than its own COST
# says, one that runs alone 200,000 more: the tests that run alone go
# before anything else (each waits for every running test to end), and
# whenever the lock is free a test that takes it starts next, so that the
# chain of tests on the lock, the pool's longest (about 640 of its 770
# seconds before this order), never waits while other tests fill the
# cores.
function(set_tests_properties)
  set(code "_set_tests_properties(")
  set(names TRUE)
  set(key "")
  set(tests)
  set(cost 0)
  set(boost 0)
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 0 ${last})
    set(arg "${ARGV${i}}")
    if(names AND arg STREQUAL "PROPERTIES")
      set(names FALSE)
    elseif(names)
      set(arg "${PW_POOL_PREFIX}${arg}")
      pw_pool_quote(quoted "${arg}")
      list(APPEND tests "${quoted}")
    elseif(key STREQUAL "")
      set(key "${arg}")
    else()
      if(key STREQUAL "COST")
        set(cost "${arg}")
      elseif(key STREQUAL "RESOURCE_LOCK" AND boost LESS 100000)
        set(boost 100000)
      elseif(key STREQUAL "RUN_SERIAL" AND arg)
        set(boost 200000)
      endif()
      set(key "")
    endif()
    pw_pool_quote(arg "${arg}")
    string(APPEND code " ${arg}")
  endforeach()
  cmake_language(EVAL CODE "${code})")
  if(boost GREATER 0)
    math(EXPR cost "${boost} + ${cost}" OUTPUT_FORMAT DECIMAL)
    list(JOIN tests " " tests)
    cmake_language(EVAL CODE "_set_tests_properties(${tests} PROPERTIES COST ${cost})")
  endif()
endfunction()

# subdirs(DIR...): each directory's CTestTestfile.cmake, in place.
function(subdirs)
  foreach(dir ${ARGV})
    if(NOT IS_ABSOLUTE "${dir}")
      set(dir "${PW_POOL_DIR}/${dir}")
    endif()
    if(EXISTS "${dir}/CTestTestfile.cmake")
      set(PW_POOL_DIR "${dir}")
      include("${dir}/CTestTestfile.cmake")
    endif()
  endforeach()
endfunction()

foreach(tree ${PW_POOL_TREES})
  string(REGEX REPLACE "=.*" "" PW_POOL_PREFIX "${tree}")
  string(REGEX REPLACE "^[^=]*=" "" PW_POOL_DIR "${tree}")
  set(PW_POOL_PREFIX "${PW_POOL_PREFIX}:")
  include("${PW_POOL_DIR}/CTestTestfile.cmake")
endforeach()
