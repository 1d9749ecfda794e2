// Which environment variables a result document records (its context's "environment"): an
// allow-list of variables known to change what is measured, with any value that looks like a
// secret redacted. Result documents are shared (CI artifacts, PR comments, bug reports), and a
// cluster's environment holds credentials: Slurm puts its auth token in SLURM_JWT.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gcb {

inline constexpr std::string_view kRedacted = "<redacted>";

// Whether `name` is recorded: the NCCL_, UCX_, FI_, OMP_, CUDA_ and OMPI_MCA_ families (all
// configuration), and the Slurm variables that describe the job's shape (job id, partition,
// node list, task and GPU counts, CPU binding); no other SLURM_ variable (SLURM_JWT is a token).
bool environment_recorded(std::string_view name);

// The value as recorded: kRedacted when the name says secret (TOKEN, SECRET, PASSWORD, PASSWD,
// JWT, CREDENTIAL, API_KEY, ACCESS_KEY, PRIVATE_KEY, AUTH) or the value looks like one (a JWT,
// a bearer token, a well-known token prefix); a URL's password replaced by kRedacted.
std::string redacted_value(std::string_view name, std::string_view value);

// The recorded variables of `envp` (NAME=VALUE strings, null-terminated), sorted by name.
nlohmann::json recorded_environment(char** envp);

}  // namespace gcb
