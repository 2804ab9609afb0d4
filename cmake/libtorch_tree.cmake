# The trainer against a LibTorch tree of its own (TRIALSHIM_LIBTORCH), such
# as PyPI's CUDA LibTorch that `make gpu` lays out (cmake/cuda_libtorch.sh):
#   TRIALSHIM_LIBTORCH/torch     include/, lib/, share/cmake/{Torch,Caffe2}
#   TRIALSHIM_LIBTORCH/nvidia     the CUDA libraries libtorch_cuda.so needs
#                                 that the CUDA toolkit lacks, where its
#                                 RPATH looks for them
set(_tree ${TRIALSHIM_LIBTORCH}/torch)
if(NOT EXISTS ${_tree}/share/cmake/Torch/TorchConfig.cmake)
  message(FATAL_ERROR "TRIALSHIM_LIBTORCH=${TRIALSHIM_LIBTORCH} has no "
    "torch/share/cmake/Torch/TorchConfig.cmake; lay it out with "
    "cmake/cuda_libtorch.sh ${TRIALSHIM_LIBTORCH}")
endif()
set(Torch_DIR ${_tree}/share/cmake/Torch CACHE PATH "" FORCE)
set(Caffe2_DIR ${_tree}/share/cmake/Caffe2 CACHE PATH "" FORCE)
list(PREPEND CMAKE_LIBRARY_PATH ${_tree}/lib)
# Hopper (H100/H200) is what the GPU machines carry; Torch's config asks.
if(NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch REQUIRED)

# The tree's include/ also carries the headers of libraries LibTorch
# bundles, google/protobuf and fmt among them, of other versions than
# Debian's protobuf and the fmt spdlog is built with; on the include path
# first, they would shadow those. So the targets see an overlay of that
# include/ without them (links, made at configure time).
set(_overlay ${CMAKE_BINARY_DIR}/libtorch-include)
file(REMOVE_RECURSE ${_overlay})
file(MAKE_DIRECTORY ${_overlay})
file(GLOB _entries RELATIVE ${_tree}/include ${_tree}/include/*)
foreach(_e ${_entries})
  if(NOT _e MATCHES "^(google|fmt|pybind11)$")
    file(CREATE_LINK ${_tree}/include/${_e} ${_overlay}/${_e} SYMBOLIC)
  endif()
endforeach()
foreach(_t c10 c10_cuda torch_cpu torch_cuda torch torch_library
           torch_cpu_library torch_cuda_library)
  if(TARGET ${_t})
    get_target_property(_dirs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(_dirs)
      string(REPLACE "${_tree}/include" "${_overlay}" _dirs "${_dirs}")
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_dirs}")
    endif()
  endif()
endforeach()
if(TORCH_INCLUDE_DIRS)
  string(REPLACE "${_tree}/include" "${_overlay}" TORCH_INCLUDE_DIRS "${TORCH_INCLUDE_DIRS}")
endif()
# libtorch_cuda.so needs libraries the linker must see to check it
# (cusparseLt, nvshmem, cuFile): -rpath-link, not an rpath, so nothing of
# this machine's layout is written into the binaries.
foreach(_lib cusparselt nvshmem cu13)
  add_link_options(-Wl,-rpath-link,${TRIALSHIM_LIBTORCH}/nvidia/${_lib}/lib)
endforeach()
# The wheel's libtorch.so exports a copy of libstdc++'s std::filesystem
# (linked in from libstdc++fs.a) that crashes when called from code built
# by this compiler (remove_all jumps to 0). Naming libstdc++ before any
# object makes it the first library the loader searches, so our calls bind
# to the system's.
add_link_options("LINKER:--push-state,--no-as-needed" "-lstdc++"
                 "LINKER:--pop-state")
