# Included by the interface packages that tools/build_interfaces.sh builds against the ROS 2
# prefix the PyPI wheels install into a virtual environment.

cmake_minimum_required(VERSION 3.21)  # DIRECTORY property IMPORTED_TARGETS

# Only the generators rclpy needs: C message structs, their type descriptions (RIHS01 type
# hashes), the C type supports (Fast DDS and introspection, dispatched by rosidl_typesupport_c)
# and the Python bindings. The C++ generators, which Python never loads, register themselves too
# (the message packages' CMake configs find them); they are dropped from the extension point
# that rosidl_generate_interfaces runs. Call after every find_package.
function(pypi_prefix_drop_cpp_generators)
  set(_point AMENT_EXTENSIONS_rosidl_generate_idl_interfaces)
  set(_kept "")
  foreach(_extension IN LISTS ${_point})
    if(NOT _extension MATCHES
        "^rosidl_(generator|typesupport|typesupport_fastrtps|typesupport_introspection)_cpp:")
      list(APPEND _kept "${_extension}")
    endif()
  endforeach()
  set(${_point} "${_kept}" PARENT_SCOPE)
endfunction()

# The wheels export their imported *__rosidl_* targets with the include directory of the
# interpreter they were built with (/opt/python/...), which does not exist here. Nothing in
# such a directory is needed, so every missing directory is dropped from those targets.
function(pypi_prefix_fix_imported_targets)
  get_property(_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    if(NOT _target MATCHES "__rosidl_")
      continue()
    endif()
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_kept "")
    foreach(_dir IN LISTS _dirs)
      if(EXISTS "${_dir}")
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
  endforeach()
endfunction()

# Unity builds: the generated sources of each target compiled as one file, which saves most of
# the compile time of a package of many small interfaces. The type description sources define
# the same static names in every file, so they are compiled one by one. Call after
# rosidl_generate_interfaces.
function(pypi_prefix_unity_build)
  get_property(_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_type ${_target} TYPE)
    if(NOT _target MATCHES "^${PROJECT_NAME}__rosidl_" OR _type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(_sources ${_target} SOURCES)
    foreach(_source IN LISTS _sources)
      if(_source MATCHES "__description\\.c$")
        set_source_files_properties(${_source} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
    set_target_properties(${_target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  endforeach()
endfunction()
