# Injected with -DCMAKE_PROJECT_INCLUDE=<this file> when building interface packages against the
# ROS 2 wheels from PyPI.
#
# The wheels' export_*__rosidl_generator_pyExport.cmake files name the include directories of the
# machine that built them (/opt/python/cp311-cp311/...). CMake refuses to generate when an imported
# target lists a directory that does not exist, so at the end of the top-level directory every such
# entry is replaced by this interpreter's Python and NumPy include directories.

if(NOT Python3_EXECUTABLE)
  message(FATAL_ERROR "wheel_include_fix.cmake: pass -DPython3_EXECUTABLE=<venv>/bin/python")
endif()

execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
    "import sysconfig, numpy; print(sysconfig.get_paths()['include']); print(numpy.get_include())"
  OUTPUT_VARIABLE _kpy_python_includes
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _kpy_result)
if(NOT _kpy_result EQUAL 0)
  message(FATAL_ERROR "wheel_include_fix.cmake: cannot query include dirs from ${Python3_EXECUTABLE}")
endif()
string(REPLACE "\n" ";" KPY_PYTHON_INCLUDE_DIRS "${_kpy_python_includes}")

function(_kpy_replace_foreign_python_includes)
  get_property(_targets DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_fixed "")
    set(_changed FALSE)
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^/opt/python/" AND NOT EXISTS "${_dir}")
        list(APPEND _fixed ${KPY_PYTHON_INCLUDE_DIRS})
        set(_changed TRUE)
      else()
        list(APPEND _fixed "${_dir}")
      endif()
    endforeach()
    if(_changed)
      list(REMOVE_DUPLICATES _fixed)
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
    endif()
  endforeach()
endfunction()

cmake_language(DEFER CALL _kpy_replace_foreign_python_includes)
