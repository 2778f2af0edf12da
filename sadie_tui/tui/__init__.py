"""The full-screen app (Textual). Imports the engine; the engine never imports this."""
