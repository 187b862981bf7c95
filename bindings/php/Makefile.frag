# Makefile.frag - `make install` also installs the PHP layer
# (lib/Breakerd -> /usr/share/php/Breakerd, on Debian's include_path) and,
# where Debian's /etc/php/X.Y/mods-available exists, breakerd.ini for
# phpenmod. INSTALL_ROOT works as for the extension.
BREAKERD_PHP_VERSION = $(shell $(PHP_EXECUTABLE) -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')

install: install-breakerd-php

install-breakerd-php:
	@echo "Installing the breakerd PHP layer:  $(INSTALL_ROOT)/usr/share/php/Breakerd/"
	@mkdir -p $(INSTALL_ROOT)/usr/share/php
	@rm -rf $(INSTALL_ROOT)/usr/share/php/Breakerd
	@cp -r $(srcdir)/lib/Breakerd $(INSTALL_ROOT)/usr/share/php/
	@if [ -d /etc/php/$(BREAKERD_PHP_VERSION)/mods-available ]; then \
		echo "Installing breakerd.ini:            $(INSTALL_ROOT)/etc/php/$(BREAKERD_PHP_VERSION)/mods-available/"; \
		mkdir -p $(INSTALL_ROOT)/etc/php/$(BREAKERD_PHP_VERSION)/mods-available; \
		install -m 644 $(srcdir)/breakerd.ini $(INSTALL_ROOT)/etc/php/$(BREAKERD_PHP_VERSION)/mods-available/breakerd.ini; \
	fi
