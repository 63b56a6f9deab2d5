# fasterm/_config.py: how this build was made, for fasterm.show_config().
#
# Everything here is recorded while CMake configures and generates the build,
# from the values CMake itself compiles with -- nothing is guessed at run time:
#   * the version: SKBUILD_PROJECT_VERSION, i.e. [project] version in
#     pyproject.toml (the one place it is defined);
#   * compiler id, version and path; build type; FASTERM_DEBUG; the Cython
#     directives; the numpy, Cython and Python versions found at build time;
#   * per compiled module, the compile options and definitions CMake attaches to
#     its target (generator expressions, evaluated at generate time), after the
#     global CMAKE_CXX_FLAGS, CMAKE_CXX_FLAGS_<CONFIG>, the C++ standard flag and
#     the PIC flag -- the order of the compiler command line (include
#     directories left out);
#   * per compiled module, the instruction-set dispatch its headers and its own
#     .cpp sources selected: they are run through the preprocessor with the
#     module's flags and every target("...") / target_clones("...") left in the
#     code is listed (an empty list: one baseline version, no load-time
#     dispatch).
# Modules register themselves in fasterm_add_module (global property
# FASTERM_MODULES); include this file after the last fasterm_add_module call.

if(DEFINED SKBUILD_PROJECT_VERSION_FULL)
  set(FASTERM_VERSION "${SKBUILD_PROJECT_VERSION_FULL}")
elseif(DEFINED SKBUILD_PROJECT_VERSION)
  set(FASTERM_VERSION "${SKBUILD_PROJECT_VERSION}")
else()  # plain cmake, outside a Python build: no version to report
  set(FASTERM_VERSION "0+unknown")
endif()

if(FASTERM_DEBUG)
  set(FASTERM_DEBUG_PY True)
else()
  set(FASTERM_DEBUG_PY False)
endif()

# The C++17 flag CMake adds (CXX_EXTENSIONS defaults to ON: -std=gnu++17).
if(DEFINED CMAKE_CXX_EXTENSIONS AND NOT CMAKE_CXX_EXTENSIONS)
  set(_fasterm_std_flag "${CMAKE_CXX17_STANDARD_COMPILE_OPTION}")
else()
  set(_fasterm_std_flag "${CMAKE_CXX17_EXTENSION_COMPILE_OPTION}")
endif()

# Instruction-set versions a module's kernels are compiled for: its headers are
# preprocessed with the module's own options and every target("...") /
# target_clones("...") attribute left in the code is listed (system headers
# spell theirs __target__).  GCC/Clang only (the headers need their extensions).
function(_fasterm_isa_dispatch name out_var)
  set(_isa "")
  # The C++ headers the module's .pyx declares its kernels from.
  get_target_property(_wing ${name} FASTERM_WING)
  file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/src/fasterm/${_wing}/${name}.pyx" _externs
       REGEX "^cdef extern from \"fasterm/[A-Za-z0-9_]+\\.hpp\"")
  set(_includes "")
  foreach(_e IN LISTS _externs)
    string(REGEX MATCH "fasterm/[A-Za-z0-9_]+\\.hpp" _hdr "${_e}")
    string(APPEND _includes "#include \"${_hdr}\"\n")
  endforeach()
  # And the module's own C++ sources, where kernels declared in a header are
  # defined (e.g. _losses: src/cpp/fasterm/losses_*.cpp).
  get_target_property(_sources ${name} SOURCES)
  foreach(_s IN LISTS _sources)
    if(_s MATCHES "\\.cpp$")
      get_filename_component(_s "${_s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      string(APPEND _includes "#include \"${_s}\"\n")
    endif()
  endforeach()
  if(_includes AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    get_target_property(_opts ${name} COMPILE_OPTIONS)
    if(NOT _opts)
      set(_opts "")
    endif()
    set(_probe "${CMAKE_CURRENT_BINARY_DIR}/fasterm_isa_${name}.cpp")
    file(WRITE "${_probe}" "${_includes}")
    separate_arguments(_global UNIX_COMMAND "${CMAKE_CXX_FLAGS}")
    execute_process(
      COMMAND "${CMAKE_CXX_COMPILER}" ${_global} ${_fasterm_std_flag} ${_opts}
              "-I${CMAKE_CURRENT_SOURCE_DIR}/src/cpp" "-I${Python_NumPy_INCLUDE_DIRS}"
              -E -P "${_probe}"
      OUTPUT_VARIABLE _code ERROR_VARIABLE _err RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "fasterm: preprocessing the headers of ${name} failed: ${_err}")
    endif()
    # Semicolons in the code would split CMake lists: drop them first.
    string(REPLACE ";" " " _code "${_code}")
    string(REGEX MATCHALL "[^_]target(_clones)?\\(\"[^)]*\\)" _attrs "${_code}")
    foreach(_attr IN LISTS _attrs)
      string(REGEX MATCHALL "\"[^\"]*\"" _names "${_attr}")
      foreach(_n IN LISTS _names)
        string(REPLACE "\"" "" _n "${_n}")
        list(APPEND _isa "${_n}")
      endforeach()
    endforeach()
    list(REMOVE_DUPLICATES _isa)
    # Every version beside a baseline; _losses picks between its target("...")
    # version and the baseline itself (losses.hpp), with no "default" spelled.
    if(_isa AND NOT "default" IN_LIST _isa)
      list(APPEND _isa "default")
    endif()
  endif()
  set(${out_var} "${_isa}" PARENT_SCOPE)
endfunction()

# CMAKE_CXX_FLAGS_<CONFIG> of the configuration being built.
set(_fasterm_config_flags "")
foreach(_c IN ITEMS Debug Release RelWithDebInfo MinSizeRel)
  string(TOUPPER "${_c}" _cu)
  string(APPEND _fasterm_config_flags "$<$<CONFIG:${_c}>:${CMAKE_CXX_FLAGS_${_cu}}>")
endforeach()

get_property(_fasterm_modules GLOBAL PROPERTY FASTERM_MODULES)
set(FASTERM_MODULES_PY "")
foreach(_m IN LISTS _fasterm_modules)
  get_target_property(_wing ${_m} FASTERM_WING)
  _fasterm_isa_dispatch(${_m} _isa)
  list(JOIN _isa "', '" _isa_py)
  if(_isa_py)
    set(_isa_py "'${_isa_py}'")
  endif()
  # Generator expressions: evaluated by file(GENERATE) below, per configuration.
  string(APPEND FASTERM_MODULES_PY
    "    '${_wing}.${_m}': {\n"
    "        'cxx_flags': '''${CMAKE_CXX_FLAGS} ${_fasterm_config_flags} ${_fasterm_std_flag} ${CMAKE_CXX_COMPILE_OPTIONS_PIC} $<JOIN:$<TARGET_PROPERTY:${_m},COMPILE_OPTIONS>, >'''.split(),\n"
    "        'definitions': '''$<JOIN:$<TARGET_PROPERTY:${_m},COMPILE_DEFINITIONS>, > ${_m}_EXPORTS'''.split(),\n"
    "        'isa_dispatch': [${_isa_py}],\n"
    "    },\n")
endforeach()

configure_file("${CMAKE_CURRENT_SOURCE_DIR}/cmake/_config.py.in"
               "${CMAKE_CURRENT_BINARY_DIR}/_config.py.in" @ONLY)
file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/config-$<CONFIG>/_config.py"
     INPUT "${CMAKE_CURRENT_BINARY_DIR}/_config.py.in")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/config-$<CONFIG>/_config.py" DESTINATION fasterm)
