"""signet_desktop package."""
