"""The command-line edge: parse, call the library, render. No domain logic here."""
