# write_if_changed(PATH TEXT): writes TEXT to PATH only when it differs
# from what PATH holds, so that nothing that depends on PATH rebuilds for
# nothing. Shared by the build-time generators (version.cmake,
# embed_suites.cmake).
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
