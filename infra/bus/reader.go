package bus

// ReportReaderPermissions are everything a process that only reads the
// reports through a durable consumer of its own needs (the app proxy, which
// learns there where agents serve): creating and binding its consumer of
// ReportsTopic, acknowledging it, receiving its deliveries and replies on
// its own inbox prefix (ReaderInboxPrefix). It cannot publish a report or
// to any agent's topic, nor touch another consumer or a stream.
func ReportReaderPermissions(durable string) (Permissions, error) {
	if err := ValidateID("durable", durable); err != nil {
		return Permissions{}, err
	}
	consumer := ReportsStream + "." + durable
	return Permissions{
		Publish: []string{
			"$JS.API.INFO",
			"$JS.API.CONSUMER.INFO." + consumer,
			"$JS.API.CONSUMER.CREATE." + consumer,
			"$JS.API.CONSUMER.CREATE." + consumer + ".>",
			"$JS.API.CONSUMER.DURABLE.CREATE." + consumer,
			"$JS.ACK." + consumer + ".>",
		},
		Subscribe: []string{
			ReaderInboxPrefix(durable) + ".>",
			deliverSubject(ReportsStream, durable),
		},
	}, nil
}

// ReaderInboxPrefix is the prefix of a report reader's reply subjects
// (Config.InboxPrefix).
func ReaderInboxPrefix(durable string) string { return inboxPrefix + "reader." + durable }
