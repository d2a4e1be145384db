"""Outgoing webhooks: a campaign's events, signed (Standard Webhooks), delivered after commit
by the task worker, retried for about a day (docs/integrations.md)."""
