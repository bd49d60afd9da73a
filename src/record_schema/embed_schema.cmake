# Writes the schema file SCHEMA into a C++ source OUT as one raw string literal (run at build
# time by the custom command in CMakeLists.txt, so an edited schema is rebuilt in).
file(READ "${SCHEMA}" text)
string(FIND "${text}" ")pipette_schema\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${SCHEMA} contains the raw string delimiter )pipette_schema\"")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from ${SCHEMA} by embed_schema.cmake; do not edit.\n"
  "namespace pipette::record_schema_internal {\n"
  "extern const char kSchemaText[] = R\"pipette_schema(${text})pipette_schema\";\n"
  "}  // namespace pipette::record_schema_internal\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
