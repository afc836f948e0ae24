"""The window's shell: its panes, menus, files, autosave and About box."""
