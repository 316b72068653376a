"""The Slack adapter: slack-bolt in Socket Mode or HTTP mode, answering through the Core."""

from adapters.slack.app import SlackBot, build_app, build_bot, configure_client
from adapters.slack.serve import serve_slack

__all__ = ["SlackBot", "build_app", "build_bot", "configure_client", "serve_slack"]
