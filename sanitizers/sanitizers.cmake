# MTSERVE_SANITIZE builds everything (our code; not Debian's libraries) under sanitizers:
#   address,undefined   AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer
#   thread              ThreadSanitizer
# scripts/test-sanitizers.sh builds and tests both. Every executable carries the runtime options
# it needs (default_options.cc: stop at the first report, TSan's suppressions file), so the
# binaries and `ctest` in such a build directory report and fail without any environment.
set(MTSERVE_SANITIZE "" CACHE STRING
    "Sanitizers to build with: address,undefined or thread (empty: none)")
set_property(CACHE MTSERVE_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

if(MTSERVE_SANITIZE STREQUAL "")
  function(mtserve_link_sanitizer_options directory)
  endfunction()
  return()
elseif(MTSERVE_SANITIZE STREQUAL "address,undefined")
  # UBSan's reports become errors (it only prints them otherwise).
  set(sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(MTSERVE_SANITIZE STREQUAL "thread")
  set(sanitize_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "MTSERVE_SANITIZE is \"${MTSERVE_SANITIZE}\"; it can be \"address,undefined\", "
                      "\"thread\" or empty")
endif()
add_compile_options(${sanitize_flags} -fno-omit-frame-pointer)
add_link_options(${sanitize_flags})

# The runtime options, which the runtimes read from the executable (mtserve_link_sanitizer_options
# links them into every executable once all are defined).
add_library(mtsanitizer_options OBJECT ${CMAKE_CURRENT_LIST_DIR}/default_options.cc)
target_compile_definitions(mtsanitizer_options PRIVATE
  MTSERVE_TSAN_SUPPRESSIONS="${CMAKE_CURRENT_LIST_DIR}/tsan.supp")
if(MTSERVE_SANITIZE STREQUAL "thread")
  # TSan's view of absl::Mutex, which Debian's Abseil was not built to give (tsan_absl_mutex.cc),
  # and OpenMP on one thread (tsan_openmp.cc).
  target_sources(mtsanitizer_options PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tsan_absl_mutex.cc
                                             ${CMAKE_CURRENT_LIST_DIR}/tsan_openmp.cc)
  target_link_libraries(mtsanitizer_options PUBLIC absl::synchronization OpenMP::OpenMP_CXX
                                                    ${CMAKE_DL_LIBS})
  # GCC warns (-Wtsan) that TSan does not model std::atomic_thread_fence, which absl::GetFlag
  # inlines from Abseil's headers into the executables' sources that read flags. A warning
  # there, not an error: flags are read at start-up, before any thread of ours.
  target_compile_options(mtsanitizer_options INTERFACE -Wno-error=tsan)
endif()

# Links mtsanitizer_options into every executable defined in `directory` and below it.
function(mtserve_link_sanitizer_options directory)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${target} PRIVATE mtsanitizer_options)
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    mtserve_link_sanitizer_options(${subdirectory})
  endforeach()
endfunction()
