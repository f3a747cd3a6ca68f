"""metatool-gateway: a very large tool catalog behind three meta-tools."""

from .actions import ACTIONS, normalize_action
from .audit import AuditRecord, JsonlAuditLog, MemoryAuditLog, redact_secrets
from .catalog import Catalog
from .context import ErrorInfo, PendingConfirmation, Principal, Problem, ToolContext, ToolResult
from .definition import PARAMS_CONFIG, NoParams, ToolDefinition, tool
from .engine import Gateway, run_sync
from .errors import (
    ConfigError,
    Conflict,
    GatewayError,
    NotFound,
    PermissionDenied,
    RegistrationError,
    ToolFailed,
    ToolInputError,
    UnknownTool,
    UserError,
)
from .gate.confirmation import ApprovalRefused, ConfirmationGate, DecidedBy, MemoryConfirmationStore
from .meta_tools import META_TOOL_NAMES
from .named_toolsets import NamedToolset, Toolsets
from .policy import Policy, Rule
from .rendering import render
from .toolset import ProviderOptions, Toolset, load_provider

__all__ = [
    "ACTIONS",
    "META_TOOL_NAMES",
    "PARAMS_CONFIG",
    "ApprovalRefused",
    "AuditRecord",
    "Catalog",
    "ConfigError",
    "ConfirmationGate",
    "Conflict",
    "DecidedBy",
    "ErrorInfo",
    "Gateway",
    "GatewayError",
    "JsonlAuditLog",
    "MemoryAuditLog",
    "MemoryConfirmationStore",
    "NamedToolset",
    "NoParams",
    "NotFound",
    "PendingConfirmation",
    "PermissionDenied",
    "Policy",
    "Principal",
    "Problem",
    "ProviderOptions",
    "RegistrationError",
    "Rule",
    "ToolContext",
    "ToolDefinition",
    "ToolFailed",
    "ToolInputError",
    "ToolResult",
    "Toolset",
    "Toolsets",
    "UnknownTool",
    "UserError",
    "load_provider",
    "normalize_action",
    "redact_secrets",
    "render",
    "run_sync",
    "tool",
]
