"""Operator reconciliation of deliveries whose remote effect is not proven."""
