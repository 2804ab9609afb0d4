# trialshim_distributed: data-parallel training on c10d (TCPStore +
# ProcessGroupGloo; see include/trialshim/trainer/distributed.h). Included
# from trainer/CMakeLists.txt; needs Torch found, and Debian's libgloo-dev
# for ProcessGroupGloo.hpp (compiled with USE_C10D_GLOO, as LibTorch was).
find_package(Gloo REQUIRED)
add_library(trialshim_distributed STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/distributed.cc)
add_library(trialshim::distributed ALIAS trialshim_distributed)
target_include_directories(trialshim_distributed PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_definitions(trialshim_distributed PRIVATE USE_C10D_GLOO)
target_link_libraries(trialshim_distributed
  PUBLIC trialshim::config ${TORCH_LIBRARIES}
  PRIVATE gloo)
trialshim_warnings(trialshim_distributed)
