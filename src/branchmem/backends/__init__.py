"""Storage backends behind one small interface (`base.Backend`)."""
