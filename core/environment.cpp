// environment.hpp's allow-list of recorded variables (NCCL_, UCX_, FI_, OMP_, CUDA_, OMPI_MCA_ prefixes and Slurm's job
// shape) and the redaction of secrets: by name, JWTs, token-like values and passwords in URLs.
#include "core/environment.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace gcb {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Families whose every variable is a setting of a library we measure through.
constexpr std::array<std::string_view, 6> kRecordedPrefixes = {"NCCL_", "UCX_", "FI_", "OMP_", "CUDA_", "OMPI_MCA_"};

// Slurm variables that describe the shape of the job (sbatch/srun "OUTPUT ENVIRONMENT VARIABLES").
constexpr std::array<std::string_view, 24> kSlurmRecorded = {
    "SLURM_JOB_ID",        "SLURM_JOB_NAME",        "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",  "SLURM_JOB_NUM_NODES",   "SLURM_NNODES",
    "SLURM_NTASKS",        "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
    "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE",    "SLURM_GPUS",
    "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK",   "SLURM_CPU_BIND",
    "SLURM_CPU_BIND_TYPE", "SLURM_DISTRIBUTION",    "SLURM_MPI_TYPE",
    "SLURM_STEP_ID",       "SLURM_STEP_NUM_TASKS",  "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_PROCID",        "SLURM_LOCALID",         "SLURM_CLUSTER_NAME"};

constexpr std::array<std::string_view, 10> kSecretNameParts = {
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "JWT", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "AUTH"};

// Prefixes of tokens issued by common services (GitHub, GitLab, Slack, AWS access key ids,
// Hugging Face).
constexpr std::array<std::string_view, 8> kTokenPrefixes = {"ghp_",   "gho_",  "ghs_", "github_pat_",
                                                            "glpat-", "xoxb-", "AKIA", "hf_"};

bool base64url(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '=';
  });
}

// header.payload.signature, each base64url, the header a JSON object ("eyJ" = '{"').
bool looks_like_jwt(std::string_view v) {
  const size_t a = v.find('.'), b = a == std::string_view::npos ? a : v.find('.', a + 1);
  if (b == std::string_view::npos || v.find('.', b + 1) != std::string_view::npos) return false;
  return starts_with(v, "eyJ") && base64url(v.substr(0, a)) && base64url(v.substr(a + 1, b - a - 1)) &&
         base64url(v.substr(b + 1));
}

bool looks_like_token(std::string_view v) {
  if (looks_like_jwt(v) || starts_with(upper(v), "BEARER ")) return true;
  for (std::string_view p : kTokenPrefixes)
    if (starts_with(v, p) && v.size() >= p.size() + 16) return true;
  return false;
}

// scheme://user:password@host... → scheme://user:<redacted>@host..., for every URL in the value
// (a list such as "a,b" may hold several).
std::string redact_url_passwords(std::string_view v) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t scheme = v.find("://", pos);
    if (scheme == std::string_view::npos) break;
    const size_t auth = scheme + 3;
    const size_t end = v.find_first_of("/?#, ;", auth);
    const size_t at = v.rfind('@', end == std::string_view::npos ? v.size() : end);
    const size_t colon = v.find(':', auth);
    if (at != std::string_view::npos && at > auth && colon != std::string_view::npos && colon < at) {
      out.append(v.substr(pos, colon + 1 - pos));
      out.append(kRedacted);
      pos = at;
    } else {
      out.append(v.substr(pos, auth - pos));
      pos = auth;
    }
  }
  out.append(v.substr(pos));
  return out;
}

}  // namespace

bool environment_recorded(std::string_view name) {
  for (std::string_view p : kRecordedPrefixes)
    if (starts_with(name, p)) return true;
  return std::find(kSlurmRecorded.begin(), kSlurmRecorded.end(), name) != kSlurmRecorded.end();
}

std::string redacted_value(std::string_view name, std::string_view value) {
  const std::string upper_name = upper(name);
  for (std::string_view part : kSecretNameParts)
    if (upper_name.find(part) != std::string::npos) return std::string(kRedacted);
  if (looks_like_token(value)) return std::string(kRedacted);
  return redact_url_passwords(value);
}

nlohmann::json recorded_environment(char** envp) {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = envp; e && *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    if (environment_recorded(name)) env[std::string(name)] = redacted_value(name, kv.substr(eq + 1));
  }
  return env;  // nlohmann::json objects are ordered by key
}

}  // namespace gcb
