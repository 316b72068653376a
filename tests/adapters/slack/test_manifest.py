"""The Slack app manifest (adapters/slack/manifest.yml), read as Slack reads it.

1. Every field codecite writes obeys the rules of Slack's published manifest schema
   (github.com/slackapi/manifest-schema, schemas/manifest.schema.1.0.0.json; the rules of
   the parts codecite touches are written out below as a JSON schema): in Socket Mode as
   shipped, and in HTTP mode after exactly the edits its comment names.
2. Every scope it asks for is needed by a Web API method the code calls or an event it
   subscribes to (Slack's method, event and scope reference pages say which), and every
   method and event the code uses has its scope. The methods are found in the adapter's
   source (its WebClient calls, and those of the Bolt helpers it uses), not listed by hand.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import re
from typing import Any

import jsonschema
import pytest
import yaml
from slack_bolt.context.assistant.thread_context_store.default_store import (
    DefaultAssistantThreadContextStore,
)
from slack_sdk import WebClient

from bot.commands import COMMANDS
from tests.support.paths import ROOT

SLACK = ROOT / "adapters" / "slack"
MANIFEST = SLACK / "manifest.yml"
README = ROOT / "README.md"


def _text(low: int, high: int, **more: Any) -> dict[str, Any]:
    return {"type": "string", "minLength": low, "maxLength": high, **more}


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": properties,
    }


_BOOL = {"type": "boolean"}
_STRING = {"type": "string"}
_URL = {"type": "string", "pattern": r"^https?:\/\/", "maxLength": 3500}
_NAMES = {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 255}
_ANY: dict[str, Any] = {}  # a part codecite does not write: its own rules are not copied here

# Slack's rules for the parts of the manifest codecite writes (schema 1.0.0).
SCHEMA = _obj(
    {
        "$schema": {"type": "string"},
        "_metadata": _ANY,
        "display_information": _obj(
            {
                "name": _text(1, 35),
                "description": _text(1, 140),
                "background_color": _text(4, 7, pattern=r"^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$"),
                "long_description": _text(175, 4000),
            },
            ("name",),
        ),
        "features": _obj(
            {
                "app_home": _obj(
                    {
                        "home_tab_enabled": _BOOL,
                        "messages_tab_enabled": _BOOL,
                        "messages_tab_read_only_enabled": _BOOL,
                    }
                ),
                "bot_user": _obj(
                    {"display_name": _text(1, 80), "always_online": _BOOL}, ("display_name",)
                ),
                "slash_commands": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 50,
                    "items": _obj(
                        {
                            "command": _text(2, 32, pattern=r"^\/"),
                            "url": {**_URL, "maxLength": 3000},
                            "description": _text(1, 2000),
                            "usage_hint": _text(1, 1000),
                            "should_escape": _BOOL,
                        },
                        ("command", "description"),
                    ),
                },
                "assistant_view": _obj(
                    {
                        "assistant_description": {"type": "string"},
                        "suggested_prompts": {
                            "type": "array",
                            "items": _obj(
                                {"title": {"type": "string"}, "message": {"type": "string"}},
                                ("title", "message"),
                            ),
                        },
                    },
                    ("assistant_description",),
                ),
                **dict.fromkeys(
                    ("functions", "shortcuts", "workflow_steps", "unfurl_domains", "agent_view"),
                    _ANY,
                ),
            }
        ),
        "oauth_config": _obj(
            {
                "redirect_urls": _ANY,
                "scopes": _obj(
                    dict.fromkeys(("user", "bot", "user_optional", "bot_optional"), _NAMES)
                ),
                "token_management_enabled": _BOOL,
                "pkce_enabled": _BOOL,
            }
        ),
        "settings": _obj(
            {
                "event_subscriptions": _obj(
                    {
                        "request_url": _URL,
                        "user_events": {**_NAMES, "maxItems": 100, "uniqueItems": True},
                        "bot_events": {**_NAMES, "maxItems": 100, "uniqueItems": True},
                        "metadata_subscriptions": _ANY,
                    }
                ),
                "interactivity": _obj(
                    {"is_enabled": _BOOL, "request_url": _URL, "message_menu_options_url": _URL},
                    ("is_enabled",),
                ),
                **dict.fromkeys(
                    (
                        "org_deploy_enabled",
                        "socket_mode_enabled",
                        "is_hosted",
                        "token_rotation_enabled",
                        "is_mcp_enabled",
                    ),
                    _BOOL,
                ),
                **dict.fromkeys(
                    ("allowed_ip_address_ranges", "incoming_webhooks", "siws_links"), _ANY
                ),
                **dict.fromkeys(("hermes_app_type", "function_runtime"), _STRING),
            }
        ),
        **dict.fromkeys(
            (
                "app_directory",
                "functions",
                "workflows",
                "datastores",
                "outgoing_domains",
                "types",
                "external_auth_providers",
                "mcp_servers",
            ),
            _ANY,
        ),
    },
    ("display_information",),
)

# Bot scopes each Web API method accepts (docs.slack.dev/reference/methods/<method>). Where a
# method needs one scope per kind of conversation, codecite calls it on every kind it
# answers in, so it needs them all (`ALL_KINDS`).
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.postMessage": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.startStream": {"chat:write"},
    "chat.appendStream": {"chat:write"},
    "chat.stopStream": {"chat:write"},
    "reactions.add": {"reactions:write"},
    "reactions.remove": {"reactions:write"},
    "conversations.info": {"channels:read", "groups:read", "im:read", "mpim:read"},
    "conversations.replies": {"channels:history", "groups:history", "im:history", "mpim:history"},
    "assistant.threads.setStatus": {"assistant:write", "chat:write"},
    "assistant.threads.setSuggestedPrompts": {"assistant:write"},
    "assistant.threads.setTitle": {"assistant:write"},
    "files.getUploadURLExternal": {"files:write"},
    "files.completeUploadExternal": {"files:write"},
}
ALL_KINDS = {"conversations.info", "conversations.replies"}
# Scopes that let the app receive each event (docs.slack.dev/reference/events/<event>).
EVENT_SCOPES: dict[str, set[str]] = {
    "app_mention": {"app_mentions:read"},
    "message.channels": {"channels:history"},
    "message.groups": {"groups:history"},
    "message.im": {"im:history"},
    "message.mpim": {"mpim:history"},
    "channel_shared": {"channels:read", "groups:read"},
    "channel_unshared": {"channels:read", "groups:read"},
    "assistant_thread_started": {"assistant:write"},
    "assistant_thread_context_changed": {"assistant:write"},
}
SLASH_COMMAND_SCOPE = "commands"
# Bolt's Assistant listeners and the events they receive.
ASSISTANT_EVENTS = {
    "thread_started": "assistant_thread_started",
    "thread_context_changed": "assistant_thread_context_changed",
    "user_message": "message.im",
}


def manifest() -> dict[str, Any]:
    loaded = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def http_mode_edits() -> list[str]:
    """The dotted keys the manifest's comment tells HTTP-mode users to add."""
    comment = [
        line for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.startswith("#")
    ]
    return re.findall(r"^#\s+((?:settings|features)\.[\w.\[\]]+)\s*$", "\n".join(comment), re.M)


def with_http_mode(data: dict[str, Any], url: str) -> dict[str, Any]:
    edited = copy.deepcopy(data)
    edited["settings"]["socket_mode_enabled"] = False
    for dotted in http_mode_edits():
        *path, key = dotted.split(".")
        places: list[Any] = [edited]
        for part in path:
            if part.endswith("[]"):
                places = [item for place in places for item in place[part[:-2]]]
            else:
                places = [place[part] for place in places]
        for place in places:
            place[key] = url
    return edited


def test_the_manifest_follows_slacks_schema_in_socket_mode() -> None:
    jsonschema.validate(manifest(), SCHEMA)
    assert manifest()["settings"]["socket_mode_enabled"] is True


def test_the_http_mode_edits_of_its_comment_follow_the_schema_too() -> None:
    assert sorted(http_mode_edits()) == [
        "features.slash_commands[].url",
        "settings.event_subscriptions.request_url",
        "settings.interactivity.request_url",
    ]
    edited = with_http_mode(manifest(), "https://codecite.example.com/slack/events")
    jsonschema.validate(edited, SCHEMA)
    assert edited["features"]["slash_commands"][0]["url"].endswith("/slack/events")


def test_the_schema_rules_catch_what_slack_refuses() -> None:
    """The encoded rules have teeth: the old comment's key, a long name, a bad colour."""
    wrong = manifest()
    wrong["features"]["slash_commands"][0]["request_url"] = "https://x/slack/events"
    with pytest.raises(jsonschema.ValidationError, match="request_url"):
        jsonschema.validate(wrong, SCHEMA)
    for path, value in (
        (("display_information", "name"), "c" * 36),
        (("display_information", "background_color"), "navy"),
        (("settings", "interactivity", "request_url"), "ftp://x"),
    ):
        bad = manifest()
        target = bad
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def _sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(SLACK.glob("*.py")))


def _web_api_names() -> dict[str, str]:
    """WebClient method name -> the Web API method it calls (`chat_postMessage` -> ...)."""
    names = {}
    for name, function in inspect.getmembers(WebClient, inspect.isfunction):
        found = re.search(r'api_call\(\s*"([\w.]+)"', inspect.getsource(function))
        if found:
            names[name] = found.group(1)
    return names


def _methods_called_in(source: str, api: dict[str, str]) -> set[str]:
    return {api[name] for name in re.findall(r"\.(\w+)\(", source) if name in api}


def web_api_methods() -> set[str]:
    """Every Web API method the adapter calls: directly, or through the Bolt helpers it
    imports (say, set_status...) and the Assistant middleware's default thread store."""
    api, source = _web_api_names(), _sources()
    methods = _methods_called_in(source, api)
    helpers = re.findall(r"^from (slack_bolt\.context\.[\w.]+) import (\w+)", source, re.M)
    for module, name in helpers:
        methods |= _methods_called_in(
            inspect.getsource(getattr(importlib.import_module(module), name)), api
        )
    if "Assistant(" in source:
        methods |= _methods_called_in(inspect.getsource(DefaultAssistantThreadContextStore), api)
    if ".files_upload_v2(" in source:  # its three steps: two Web API methods and a plain POST
        methods |= _methods_called_in(inspect.getsource(WebClient.files_upload_v2), api)
    return methods


def events_handled() -> set[str]:
    source = _sources()
    events = set(re.findall(r'app\.event\("([\w.]+)"\)', source))
    events |= {
        event for listener, event in ASSISTANT_EVENTS.items() if f"assistant.{listener}(" in source
    }
    return events


def test_every_method_the_code_calls_is_known_and_has_its_scopes() -> None:
    methods = web_api_methods()
    assert {"chat.postMessage", "conversations.info", "assistant.threads.setStatus"} <= methods
    unknown = methods - set(METHOD_SCOPES)
    assert not unknown, f"add the scopes of {unknown} from Slack's method reference"
    requested = set(manifest()["oauth_config"]["scopes"]["bot"])
    for method in methods:
        needed = METHOD_SCOPES[method]
        if method in ALL_KINDS:
            assert needed <= requested, method
        elif needed:
            assert needed & requested, method


def test_every_event_subscribed_is_handled_and_has_its_scope() -> None:
    data = manifest()
    subscribed = set(data["settings"]["event_subscriptions"]["bot_events"])
    requested = set(data["oauth_config"]["scopes"]["bot"])
    handled = events_handled()
    for event in subscribed:
        assert event in handled or (event.startswith("message.") and "message" in handled), event
        assert EVENT_SCOPES[event] & requested, event
    assert handled - {"message"} <= subscribed  # nothing the code waits for goes unsent


def test_every_scope_requested_is_used() -> None:
    data = manifest()
    used = set().union(*(METHOD_SCOPES[m] for m in web_api_methods()))
    used |= set().union(
        *(EVENT_SCOPES[e] for e in data["settings"]["event_subscriptions"]["bot_events"])
    )
    if "app.command(" in _sources():
        used.add(SLASH_COMMAND_SCOPE)
    unused = set(data["oauth_config"]["scopes"]["bot"]) - used
    assert not unused, f"requested but used by no method or event: {sorted(unused)}"


def test_the_slash_command_and_the_readme_name_every_command() -> None:
    described = manifest()["features"]["slash_commands"][0]["description"]
    readme = README.read_text(encoding="utf-8")
    slack = readme.split("### Slack", 1)[1].split("### Discord", 1)[0]
    discord = readme.split("### Discord", 1)[1].split("#### 1.", 1)[0]
    for spec in COMMANDS:
        if spec.name == "ask" or spec.admin_only:  # admin commands are documented with admins
            continue
        assert re.search(rf"\b{spec.name}\b", described), spec.name
        assert f"/codecite {spec.name}" in slack or re.search(
            rf"`/codecite [^`]*\b{spec.name}\b", slack
        ), spec.name
        assert f"`/{spec.name}" in discord, spec.name


def test_the_readme_lists_the_scopes_the_manifest_asks_for() -> None:
    readme = README.read_text(encoding="utf-8")
    for scope in manifest()["oauth_config"]["scopes"]["bot"]:
        assert f"`{scope}`" in readme, scope
