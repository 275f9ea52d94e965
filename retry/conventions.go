package retry

// Convention is how one framework (or ladder's seeds) records a message's
// retry state in its headers, written from the framework's own source
// (Source). ReadState reads every field through this table; discovery may
// read the recognition fields.
//
// Each field lists header paths, the first readable one wins:
//
//	NAME           the header NAME (any dots are part of the name)
//	NAME/K1/K2     key K2 of table K1 of table header NAME; a key
//	               {origin} stands for the origin queue read first
//	NAME#K1.K2     NAME holds JSON text; field K2 of object K1 (an
//	               array is read at its first element: the newest)
//	NAME#[-1].K    the same, an array read at its last element (the
//	               newest where a framework appends)
//	NAME#[max].K   the same, the element whose K is the largest count
//	{A}.{B}        the texts of headers A and B with the text between
//	               (Moleculer's queue, "{group}.{channel}")
//	body#K1.K2     the message body holds a JSON object: field K2 of
//	               object K1 (Dramatiq's options.retries); read where
//	               the body is known (a peek, --where), never for an
//	               origin (moves read origins from headers)
type Convention struct {
	// Name is the framework's name as people say it; Short, in three
	// letters at most, for narrow columns ("5 snk").
	Name  string
	Short string
	// Source is the framework's source it follows: repository and file.
	Source string

	// Recognising it. Marks are headers only it writes (a message carrying
	// one is its message). Requires are headers that must all be present
	// before its fields are read (for generic names such as Celery's
	// "retries"). QueueNames are its naming of the queues it declares,
	// {queue} standing for the work queue; ErrorQueues are those among
	// them that are the dead end of {queue}. Exchanges are the exchanges
	// (name: type) its documented setup declares.
	Marks       []string
	Requires    []string
	QueueNames  []string
	ErrorQueues []string
	// DelayQueues are those among QueueNames that the workers consume and
	// hold each message in until it is due (Dramatiq's {queue}.DQ): no
	// TTL, consumed by design, part of {queue}'s ladder.
	DelayQueues []string
	// WaitQueues are its wait queues named after the queue they return to,
	// with {exchange}, {queue} and {ms} in that order: where a message
	// waited says where it failed even once that queue is gone (Symfony's
	// delay queues expire 10 s after their last use).
	WaitQueues []string
	Exchanges  []string

	// Count is where the number of retries already made lives;
	// CountIsAttempt when it numbers attempts instead (the first is 1).
	Count          []string
	CountIsAttempt bool
	// CountSums: each Count path counts one kind of retry (rascal's
	// republished and forwarded): the count is the sum of those readable.
	CountSums  bool
	Error      []string
	ErrorType  []string
	ErrorTime  []string
	StackTrace []string
	// TimeIsMillis: its times are Unix milliseconds (JavaScript's
	// Date.now()), not seconds. StackIsBase64: its stack trace is base64
	// text (Moleculer encodes it so that any transport's headers carry it).
	TimeIsMillis  bool
	StackIsBase64 bool
	// OriginQueue is the queue processing failed in; OriginIsAddress when
	// it is an endpoint address whose last path segment names the queue.
	OriginQueue      []string
	OriginIsAddress  bool
	OriginExchange   []string
	OriginRoutingKey []string
	// DueTime is when the framework means the message to run (Celery's
	// eta): the message's due time when nothing else gives one.
	DueTime []string
}

// conventions is the table, in the order ReadState tries counts and
// errors: counters written on purpose first, as before the table existed
// (x-retry-count, yii-attempt, Spring's error, MassTransit, NServiceBus).
// x-death and the quorum delivery count come after all of them
// (countSources).
var conventions = [...]Convention{
	{
		Name:   "ladder seeds",
		Short:  "lad",
		Source: "github.com/ladder-tui/ladder: examples/worker/main.go (Go seed), the Python seed's worker (x-last-error*)",
		Count:  []string{SourceRetryCount},
		// The Python seed writes isoformat() of utcnow().
		Error:     []string{hdrPyLastError},
		ErrorTime: []string{hdrPyLastErrorTime},
	},
	{
		Name:           "yii2-queue",
		Short:          "yii",
		Source:         "yiisoft/yii2-queue: src/drivers/amqp_interop/Queue.php",
		Marks:          []string{SourceYiiAttempt},
		Count:          []string{SourceYiiAttempt},
		CountIsAttempt: true,
	},
	{
		// Spring AMQP 3.2 counts republishes in retry-count
		// (MessageProperties.RETRY_COUNT), which its listener reads in
		// place of x-death: on 4.x a republished x-death stays at 1. A
		// generic name, so read only beside Spring's exception header.
		Name:     "Spring AMQP / Spring Cloud Stream",
		Short:    "spr",
		Source:   "spring-projects/spring-amqp: spring-amqp/src/main/java/org/springframework/amqp/core/MessageProperties.java (RETRY_COUNT, retry-count)",
		Requires: []string{"retry-count", hdrSpringError},
		Count:    []string{"retry-count"},
	},
	{
		// RepublishMessageRecoverer publishes the failed message itself
		// (no x-death): its count is the ladder's x-death, if any.
		Name:   "Spring AMQP / Spring Cloud Stream",
		Short:  "spr",
		Source: "spring-projects/spring-amqp: spring-rabbit/src/main/java/org/springframework/amqp/rabbit/retry/RepublishMessageRecoverer.java; spring-cloud/spring-cloud-stream: binders/rabbit-binder/spring-cloud-stream-binder-rabbit-core/src/main/java/org/springframework/cloud/stream/binder/rabbit/provisioning/RabbitExchangeQueueProvisioner.java",
		Marks:  []string{hdrSpringError, hdrSpringStack, hdrSpringExchange},
		// {queue}.parkingLot is the binder documentation's parking lot
		// (spring-cloud-stream-binder-rabbit's docs, "Putting it All
		// Together": ORIGINAL_QUEUE + ".parkingLot"), where the
		// application republishes what has failed too often.
		QueueNames:       []string{"{queue}.dlq", "{queue}.parkingLot"},
		ErrorQueues:      []string{"{queue}.dlq", "{queue}.parkingLot"},
		Exchanges:        []string{"DLX: direct"},
		Error:            []string{hdrSpringError},
		StackTrace:       []string{hdrSpringStack},
		OriginExchange:   []string{hdrSpringExchange},
		OriginRoutingKey: []string{hdrSpringKey},
	},
	{
		Name:   "MassTransit",
		Short:  "mt",
		Source: "MassTransit/MassTransit: src/MassTransit.Abstractions/MessageHeaders.cs, src/MassTransit.Abstractions/Contexts/SendContextExtensions.cs (SetExceptionHeaders, redelivery count)",
		// MT-Reason ("skip", "fault"…) is set on whatever its dead-letter
		// transport moves to {queue}_skipped (src/Transports/
		// MassTransit.RabbitMqTransport/RabbitMqTransport/RabbitMqDeadLetterTransport.cs).
		Marks:       []string{SourceMassTransit, hdrMTError, hdrMTInput, "MT-Reason"},
		QueueNames:  []string{"{queue}", "{queue}_error", "{queue}_skipped"},
		ErrorQueues: []string{"{queue}_error", "{queue}_skipped"},
		Exchanges:   []string{"{queue}: fanout", "{queue}_error: fanout", "{queue}_skipped: fanout", "delayed redelivery: x-delayed-message"},
		// Redeliveries (delayed, through the broker) first, then the
		// immediate retries of the attempt that faulted.
		Count:           []string{SourceMassTransit, hdrMTRetryCount},
		Error:           []string{hdrMTError},
		ErrorType:       []string{"MT-Fault-ExceptionType"},
		ErrorTime:       []string{hdrMTErrorTime},
		StackTrace:      []string{"MT-Fault-StackTrace"},
		OriginQueue:     []string{hdrMTInput},
		OriginIsAddress: true,
	},
	{
		Name:        "NServiceBus",
		Short:       "nsb",
		Source:      "Particular/NServiceBus: src/NServiceBus.Core/Headers.cs (NServiceBus.Retries), src/NServiceBus.Core/Recoverability/Faults/FaultsHeaderKeys.cs, src/NServiceBus.Core/Recoverability/Faults/FaultMetadataExtractor.cs (ExceptionInfo.*, TimeOfFailure); Particular/NServiceBus.RabbitMQ: src/NServiceBus.Transport.RabbitMQ/DelayedDelivery/DelayInfrastructure.cs",
		Marks:       []string{SourceNServiceBus, hdrNSBError, hdrNSBFailedQ},
		QueueNames:  []string{"{queue}", "error", "nsb.v2.delay-level-00 … nsb.v2.delay-level-27"},
		ErrorQueues: []string{"error"},
		Exchanges:   []string{"nsb.v2.delay-level-NN: topic", "nsb.v2.delay-delivery: topic"},
		Count:       []string{SourceNServiceBus},
		Error:       []string{hdrNSBError},
		ErrorType:   []string{"NServiceBus.ExceptionInfo.ExceptionType"},
		ErrorTime:   []string{hdrNSBErrorTime},
		StackTrace:  []string{"NServiceBus.ExceptionInfo.StackTrace"},
		OriginQueue: []string{hdrNSBFailedQ},
	},
	{
		// Celery's error text lives in its result backend, not in headers.
		Name:     "Celery",
		Short:    "cel",
		Source:   "celery/celery: celery/app/amqp.py (as_task_v2 headers), celery/app/task.py (retry)",
		Marks:    []string{"task", "id"},
		Requires: []string{"task", "id"},
		Count:    []string{"retries"},
		// ISO 8601 (eta.isoformat()), None when the task runs at once.
		DueTime: []string{"eta"},
	},
	{
		// Maxretry publishes the message to the error exchange with
		// retry_info: a JSON object, or an array of them (newest first)
		// when it had failed before.
		Name:           "Sneakers",
		Short:          "snk",
		Source:         "jondot/sneakers: lib/sneakers/handlers/maxretry.rb",
		Marks:          []string{"retry_info"},
		QueueNames:     []string{"{queue}", "{queue}-retry", "{queue}-error", "{queue}-retry-requeue"},
		ErrorQueues:    []string{"{queue}-error"},
		Exchanges:      []string{"{queue}-retry: topic", "{queue}-error: topic", "{queue}-retry-requeue: topic"},
		Count:          []string{"retry_info#num_attempts"},
		CountIsAttempt: true,
		Error:          []string{"retry_info#error_message", "retry_info#error"},
		ErrorType:      []string{"retry_info#error_class"},
		ErrorTime:      []string{"retry_info#failed_at"},
		StackTrace:     []string{"retry_info#backtrace"},
	},
	{
		// Everything is in one nested table header, "rascal".
		Name:      "rascal",
		Short:     "rsc",
		Source:    "onebeyond/rascal: lib/amqp/SubscriberError.js (recovery counts, error), lib/amqp/Subscription.js (originalQueue, set on each delivery)",
		Marks:     []string{"rascal"},
		Exchanges: []string{"delay: topic", "retry: topic", "dead_letters: topic"},
		// Each recovery strategy counts its own attempts: republish (an
		// immediate retry) and forward (through a delay queue, rascal's
		// README's retry loop).
		Count:            []string{"rascal/recovery/{origin}/republished", "rascal/recovery/{origin}/forwarded"},
		CountSums:        true,
		Error:            []string{"rascal/error/message"},
		ErrorType:        []string{"rascal/error/code"},
		OriginQueue:      []string{"rascal/originalQueue"},
		OriginExchange:   []string{"rascal/originalExchange"},
		OriginRoutingKey: []string{"rascal/originalRoutingKey"},
	},
	{
		// Symfony Serializer only (messenger.transport.symfony_serializer):
		// each stamp class is one header, a JSON array of its stamps,
		// oldest first. The default PhpSerializer keeps every stamp inside
		// the PHP-serialized body, where ladder reads nothing. Going to the
		// failure transport appends a RedeliveryStamp(0): the retries made
		// are the history's largest count, not its last.
		Name:  "Symfony Messenger",
		Short: "sym",
		Source: "symfony/amqp-messenger: Transport/Connection.php (delay queues), Transport/AmqpSender.php; " +
			"symfony/messenger: Transport/Serialization/Serializer.php (X-Message-Stamp-*), EventListener/SendFailedMessageForRetryListener.php, " +
			"EventListener/SendFailedMessageToFailureTransportListener.php, EventListener/AddErrorDetailsStampListener.php",
		Marks: []string{symfonyRedelivery, symfonyErrorDetails, symfonySentToFailure},
		// Retries wait in delay_<exchange>_<queue>_<ms>_retry (TTL <ms>,
		// x-expires <ms> + 10 s, dead-lettering to the queue through the default
		// exchange). "failed" is the documentation's failure transport.
		QueueNames:  []string{"{queue}", "delay_{exchange}_{queue}_{ms}_retry", "failed"},
		ErrorQueues: []string{"failed"},
		WaitQueues:  []string{"delay_{exchange}_{queue}_{ms}_retry"},
		Exchanges:   []string{"messages: fanout", "delays: direct", "failed: fanout"},
		Count:       []string{symfonyRedelivery + "#[max].retryCount"},
		Error:       []string{symfonyErrorDetails + "#[-1].exceptionMessage"},
		ErrorType:   []string{symfonyErrorDetails + "#[-1].exceptionClass"},
		// RedeliveryStamp's time is when the failure was handled.
		ErrorTime:  []string{symfonyRedelivery + "#[-1].redeliveredAt"},
		StackTrace: []string{symfonyErrorDetails + "#[-1].flattenException.trace_as_string"},
	},
	{
		// Dramatiq writes no headers: its retry count, traceback and eta
		// are in the JSON body's options, which ladder does not read (see
		// docs/frameworks.md). A message in {queue}.XQ was rejected
		// in {queue}: its x-death says so. {queue}.DQ is consumed by the
		// workers, which hold each message until its eta.
		Name:        "Dramatiq",
		Short:       "drq",
		Source:      "Bogdanp/dramatiq: dramatiq/brokers/rabbitmq.py (queues and their arguments), dramatiq/common.py (dq_name, xq_name), dramatiq/middleware/retries.py (options.retries, options.traceback)",
		QueueNames:  []string{"{queue}", "{queue}.DQ", "{queue}.XQ"},
		ErrorQueues: []string{"{queue}.XQ"},
		DelayQueues: []string{"{queue}.DQ"},
	},
	{
		// middleware.Retry retries inside the handler: nothing on the
		// message counts them. PoisonQueue publishes what still fails to a
		// topic the application names, with the error and the topic it
		// was subscribed to; watermill-amqp's DefaultMarshaler writes
		// metadata as headers. With the queue configs the topic is the
		// queue; with the pub/sub configs the queue is topic_suffix.
		Name:        "Watermill",
		Short:       "wm",
		Source:      "ThreeDotsLabs/watermill: message/router/middleware/poison.go, message/router/middleware/retry.go; ThreeDotsLabs/watermill-amqp: pkg/amqp/marshaler.go, pkg/amqp/config.go",
		Marks:       []string{"reason_poisoned", "topic_poisoned", "_watermill_message_uuid"},
		QueueNames:  []string{"{queue}", "poison_queue"},
		ErrorQueues: []string{"poison_queue"}, // the name in Watermill's examples
		Exchanges:   []string{"{queue}: fanout (pub/sub configs; the queue configs use the default exchange)"},
		Error:       []string{"reason_poisoned"},
		OriginQueue: []string{"topic_poisoned"},
	},
	{
		// The AMQP adapter republishes a failed message straight to its
		// queue with x-redelivered-count, and after maxRetries publishes
		// it to the dead-letter exchange with new headers: the error and
		// its channel and group, but no count.
		Name:          "Moleculer Channels",
		Short:         "mol",
		Source:        "moleculerjs/moleculer-channels: src/adapters/amqp.js (redelivery, moveToDeadLetter), src/constants.js, src/utils.js (transformErrorToHeaders)",
		Marks:         []string{"x-original-channel", "x-original-group", "x-redelivered-count"},
		QueueNames:    []string{"{group}.{channel}", "FAILED_MESSAGES"},
		ErrorQueues:   []string{"FAILED_MESSAGES"},
		Exchanges:     []string{"{channel}: fanout", "DEAD_LETTER: fanout"},
		Count:         []string{"x-redelivered-count"},
		Error:         []string{"x-error-message"},
		ErrorType:     []string{"x-error-name", "x-error-type"},
		ErrorTime:     []string{"x-error-timestamp"},
		TimeIsMillis:  true,
		StackTrace:    []string{"x-error-stack"},
		StackIsBase64: true,
		// The queue, not the channel's fanout exchange: republishing
		// there would reach every group, those that succeeded too.
		OriginQueue: []string{"{x-original-group}.{x-original-channel}"},
	},
	{
		// Rebus retries in memory (the delivery is nacked back to its
		// queue, counted by message id in the process: nothing on the
		// message), then sends it to the error queue with the error and
		// the input queue it failed in added to its headers. Its RabbitMQ
		// transport binds every queue to the direct exchange RebusDirect
		// by its own name.
		Name:  "Rebus",
		Short: "rbs",
		Source: "rebus-org/Rebus: Rebus/Retry/PoisonQueues/DeadletterQueueErrorHandler.cs (rbs2-error-details, rbs2-source-queue), " +
			"Rebus/Messages/Headers.cs; rebus-org/Rebus.RabbitMq: Rebus.RabbitMq/RabbitMq/RabbitMqTransport.cs (RebusDirect, RebusTopics)",
		Marks:       []string{"rbs2-error-details", "rbs2-source-queue"},
		QueueNames:  []string{"{queue}", "error"},
		ErrorQueues: []string{"error"},
		Exchanges:   []string{"RebusDirect: direct", "RebusTopics: topic"},
		// "<exception message>: <details>", the details being the
		// exception's ToString (type, message and stack trace).
		Error:       []string{"rbs2-error-details"},
		OriginQueue: []string{"rbs2-source-queue"},
	},
	{
		// One shared wait queue for every work queue: a failure is
		// republished to amqplib-retry.delayed (no TTL; its own
		// expiration) with the original properties and _targetQueue;
		// dead-lettered into amqplib-retry.ready, whose consumer in the
		// library sends it back to _targetQueue with the original
		// properties (_retryCount raised). When the delay function gives
		// up it goes to {queue}.failure with those properties.
		Name:   "amqplib-retry",
		Short:  "ar",
		Source: "lanetix/node-amqplib-retry: src/amqp_handler_wrapper.js (_retryCount, _originalProperties, _targetQueue), src/ready_queue_consumer.js, src/initializer.js, src/config.js",
		Marks:  []string{"_targetQueue", "_originalProperties"},
		// Requires so a generic _retryCount alone stays a guess.
		QueueNames:  []string{"{queue}", "{queue}.failure", "amqplib-retry.delayed", "amqplib-retry.ready"},
		ErrorQueues: []string{"{queue}.failure"},
		Exchanges:   []string{"amqplib-retry: direct"},
		// Raised before each delay: the failures so far, the first among
		// them.
		Count:          []string{"_originalProperties/headers/_retryCount", "_retryCount"},
		CountIsAttempt: true,
		OriginQueue:    []string{"_targetQueue"},
	},
}

// Symfony Messenger's stamp headers: X-Message-Stamp- and the stamp's class.
const (
	symfonyRedelivery    = `X-Message-Stamp-Symfony\Component\Messenger\Stamp\RedeliveryStamp`
	symfonyErrorDetails  = `X-Message-Stamp-Symfony\Component\Messenger\Stamp\ErrorDetailsStamp`
	symfonySentToFailure = `X-Message-Stamp-Symfony\Component\Messenger\Stamp\SentToFailureTransportStamp`
)

// ShortName is the Short of the framework named name, "" when none is.
func ShortName(name string) string {
	for i := range conventions {
		if conventions[i].Name == name {
			return conventions[i].Short
		}
	}
	return ""
}

// Conventions is the table ReadState reads, in the order it tries them.
func Conventions() []Convention { return append([]Convention(nil), conventions[:]...) }
